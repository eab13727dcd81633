// Touch and on-screen keyboards for the canvas: turns fingers into what Dear ImGui understands (a tap
// is a click where the finger is, a drag scrolls with inertia, a long press hovers and shows the
// tooltip) and lends the app a real, visually hidden <input> while one of its text fields is active,
// so a phone opens its keyboard and IME, paste and autocorrect text reach the field. Computes nothing.
(function () {
  "use strict";
  const canvas = document.getElementById("canvas");
  const stage = document.getElementById("stage");
  const proxy = document.getElementById("text-proxy");
  if (!canvas || !stage || !proxy) return;

  const TAP_SLOP = 10;          // CSS px a finger may wander and still tap
  const LONG_PRESS_MS = 500;    // held this long without moving: hover (the tooltip)
  const WHEEL_PER_PX = 100 / 75; // the app scrolls 75 CSS px per 100 wheel units (platform.cpp, ImGui's step)
  const FRICTION_PER_MS = 0.0035;  // inertia: speed decays by e^(-t·this)
  const MIN_SPEED = 0.02;       // CSS px/ms: below this the glide stops

  let started = false;  // the app draws (attentionExplainer.ready resolved)
  if (window.attentionExplainer) window.attentionExplainer.ready.then(() => { started = true; }, () => {});
  const running = () => started;
  function mouse(type, x, y, extra = {}) {
    canvas.dispatchEvent(new MouseEvent(type, { clientX: x, clientY: y, bubbles: true, cancelable: true, button: 0,
      buttons: type === "mousedown" ? 1 : 0, view: window, ...extra }));
  }
  function wheel(x, y, dx, dy) {
    canvas.dispatchEvent(new WheelEvent("wheel", { clientX: x, clientY: y, deltaX: dx, deltaY: dy, deltaMode: 0,
      bubbles: true, cancelable: true, view: window }));
  }
  const runFrame = () => window.Module.ccall("attn_run_frame", null, [], []);

  // [Fingers] One finger at a time; a second finger ends the gesture without a click.
  let gesture = null;  // {id, x0, y0, x, y, moved, longPressed, timer, samples: [[t, x, y]]}
  let glide = 0;       // the inertia animation frame
  let hovering = false;
  function stopGlide() { if (glide) cancelAnimationFrame(glide); glide = 0; }
  function leave() { if (hovering) { canvas.dispatchEvent(new MouseEvent("mouseleave", { bubbles: false })); hovering = false; } }

  function onStart(e) {
    if (!canvas.contains(e.target) && e.target !== canvas) return;
    e.stopPropagation();  // Emscripten's GLFW would press the mouse where it last was, not under the finger
    e.preventDefault();   // no emulated mouse events, no page scroll or zoom behind the canvas
    if (window.Module) window.Module.touchInput = true;
    stopGlide();
    if (gesture) { clearTimeout(gesture.timer); gesture = null; return; }
    const t = e.changedTouches[0];
    leave();
    // Samples are stamped with the events' own times: a busy page hands over several moves at once.
    gesture = { id: t.identifier, x0: t.clientX, y0: t.clientY, x: t.clientX, y: t.clientY, moved: false,
      longPressed: false, samples: [[e.timeStamp, t.clientX, t.clientY]] };
    const g = gesture;
    g.timer = setTimeout(() => {
      if (gesture !== g || g.moved) return;
      g.longPressed = true;  // hover where the finger rests: the tooltip appears and stays after lifting
      mouse("mousemove", g.x, g.y);
      hovering = true;
    }, LONG_PRESS_MS);
  }
  function finger(e) {
    if (!gesture) return null;
    for (const t of e.changedTouches) if (t.identifier === gesture.id) return t;
    return null;
  }
  function onMove(e) {
    e.stopPropagation();
    e.preventDefault();
    const t = finger(e);
    if (!t) return;
    const g = gesture;
    if (!g.moved && Math.hypot(t.clientX - g.x0, t.clientY - g.y0) > TAP_SLOP && !g.longPressed) {
      g.moved = true;
      clearTimeout(g.timer);
      mouse("mousemove", g.x0, g.y0);  // the scroll goes to the box under the finger
      hovering = true;
    }
    if (g.moved) wheel(g.x0, g.y0, (g.x - t.clientX) * WHEEL_PER_PX, (g.y - t.clientY) * WHEEL_PER_PX);
    g.x = t.clientX;
    g.y = t.clientY;
    const now = e.timeStamp;
    g.samples.push([now, g.x, g.y]);
    while (g.samples.length > 2 && now - g.samples[0][0] > 100) g.samples.shift();
  }
  function onEnd(e) {
    e.stopPropagation();
    e.preventDefault();
    const t = finger(e);
    if (!t) return;
    const g = gesture;
    gesture = null;
    clearTimeout(g.timer);
    if (e.type === "touchcancel" || g.longPressed) return;
    if (g.moved) { startGlide(g); return; }
    tap(g.x0, g.y0);
  }

  // A tap: the mouse moves there, presses and releases. ImGui sees the press in the next frame and
  // the release in the one after (it reads the buttons once a frame); the first is drawn right here,
  // inside the touch handler, so that a text field it activates can take the keyboard at once
  // (phones open their keyboard only for a focus() made while handling the finger).
  function tap(x, y) {
    mouse("mousemove", x, y);
    mouse("mousedown", x, y);
    mouse("mouseup", x, y);
    hovering = true;
    if (!running()) return;
    runFrame();
    const field = textField();
    if (field && field.active) lendInput(field, x, y);
    else if (document.activeElement === proxy) proxy.blur();
    // The hover ends with the gesture: a tooltip does not stick to a finger that has left.
    setTimeout(() => { if (!gesture && !glide) leave(); }, 120);
  }

  function startGlide(g) {
    const [t0, x0, y0] = g.samples[0], [t1, x1, y1] = g.samples[g.samples.length - 1];
    const dt = Math.max(1, t1 - t0);
    let vx = (x1 - x0) / dt, vy = (y1 - y0) / dt, last = performance.now();
    const step = (now) => {
      const ms = Math.max(0, Math.min(50, now - last));  // (a frame's time stamp may precede `last`)
      last = now;
      const decay = Math.exp(-FRICTION_PER_MS * ms);
      vx *= decay;
      vy *= decay;
      if (Math.hypot(vx, vy) < MIN_SPEED) { glide = 0; leave(); return; }
      wheel(g.x0, g.y0, -vx * ms * WHEEL_PER_PX, -vy * ms * WHEEL_PER_PX);
      glide = requestAnimationFrame(step);
    };
    glide = requestAnimationFrame(step);
  }

  const options = { capture: true, passive: false };
  stage.addEventListener("touchstart", onStart, options);
  stage.addEventListener("touchmove", onMove, options);
  stage.addEventListener("touchend", onEnd, options);
  stage.addEventListener("touchcancel", onEnd, options);

  // [Keyboard] While the proxy input has the focus it is the only way text reaches the app: the
  // keys typed into it are kept from Emscripten's GLFW (which would type them a second time), and
  // its changes are sent to the active field as deletions and insertions.
  function textField() {
    try { return JSON.parse(window.Module.ccall("attn_text_field", "string", [], [])); } catch (e) { return null; }
  }
  let synced = "";  // the proxy's value as the app's field has it
  let caret = 0;
  function lendInput(field, x, y) {
    // Under the finger: a phone scrolls its focused input into view, and this one is already there.
    Object.assign(proxy.style, { left: `${x}px`, top: `${y}px` });
    proxy.value = synced = field.text;
    caret = field.cursor;
    if (document.activeElement !== proxy) proxy.focus({ preventScroll: true });
    try { proxy.setSelectionRange(caret, caret); } catch (e) { /* not a text input */ }
  }
  function edit(text, backspaces, key) {
    window.Module.ccall("attn_text_field_edit", null, ["string", "number", "number"], [text, backspaces, key]);
  }
  const KEYS = { Enter: 1, Escape: 2, ArrowLeft: 3, ArrowRight: 4, Home: 5, End: 6, Tab: 7 };
  function sendDifference() {
    const now = proxy.value;
    if (now === synced || !running()) return;
    // The common start and end; what lies between was replaced. The app's cursor sits where the
    // proxy's was (both move together), so the old middle is deleted from its end backwards.
    let start = 0;
    while (start < now.length && start < synced.length && now[start] === synced[start]) start++;
    let end = 0;
    while (end < now.length - start && end < synced.length - start &&
      now[now.length - 1 - end] === synced[synced.length - 1 - end]) end++;
    const removedEnd = synced.length - end;
    for (; caret < removedEnd; caret++) edit("", 0, KEYS.ArrowRight);
    for (; caret > removedEnd; caret--) edit("", 0, KEYS.ArrowLeft);
    edit(now.slice(start, now.length - end), removedEnd - start, 0);
    synced = now;
    caret = proxy.selectionEnd !== null ? proxy.selectionEnd : start + (now.length - end - start);
  }
  proxy.addEventListener("input", (e) => { if (!e.isComposing) sendDifference(); });
  proxy.addEventListener("compositionend", sendDifference);
  function proxyKey(e) {
    if (e.isComposing || e.keyCode === 229 || !running()) return;
    const key = KEYS[e.key];
    if (!key) return;
    if (e.key === "Enter" || e.key === "Escape" || e.key === "Tab") e.preventDefault();
    sendDifference();
    edit("", 0, key);
    if (e.key === "ArrowLeft") caret = Math.max(0, caret - 1);
    if (e.key === "ArrowRight") caret = Math.min(proxy.value.length, caret + 1);
    if (e.key === "Home") caret = 0;
    if (e.key === "End") caret = proxy.value.length;
  }
  // Registered before GLFW's own window listeners, so these run first. The browser still types
  // into the proxy (its default action), which the input events above pass on.
  for (const type of ["keydown", "keypress", "keyup"])
    window.addEventListener(type, (e) => {
      if (e.target !== proxy) return;
      if (type === "keydown") proxyKey(e);
      e.stopImmediatePropagation();
    }, true);
  // The app says when its active field changes; the proxy lets go when no field is active.
  window.Module.onTextField = (active) => {
    if (!active && document.activeElement === proxy) proxy.blur();
  };
})();
