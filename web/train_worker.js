// The train view's Web Worker: loads the trainer's wasm (src/worker/train_worker.cpp) and trains the
// runs the page starts, in ~20 ms turns, so training never takes the page's main thread. Messages:
// the page → {type: "load", flavour} once, then the C++ session's {type: start | until | stop, id, ...};
// the worker → {type: "ready"} | {type: "failed", why} | {type: "reports", reports: [...], params}
// (TrainRun::report's JSON per run; params: one Float32Array, each report's weights at its offset).
"use strict";
importScripts("worker_wasm.js");  // loadWorkerWasm

let ready = false;
let running = false;
const queue = [];  // messages that came before the wasm was ready
const REPORT_MS = 100;  // a report (and the shown run's weights) ten times a second
let lastReport = 0;

function call(name, types, args) {
  return Module.ccall(name, types.ret, types.args, args);
}

function handle(message) {
  const reply = JSON.parse(call("tw_message", { ret: "string", args: ["string"] }, [JSON.stringify(message)]));
  if (reply.error) postMessage({ type: "failed", why: `train worker: ${reply.error}` });
  if (!running) { running = true; nextTurn(); }
}

function report() {  // with the shown run's weights when they changed
  const reports = JSON.parse(call("tw_reports", { ret: "string", args: ["number"] }, [1]));
  const total = reports.reduce((n, r) => n + (r.params_count || 0), 0);
  const pointer = total ? call("tw_params", { ret: "number", args: [] }, []) >>> 0 : 0;
  const params = total ? new Float32Array(Module.HEAPU8.buffer.slice(pointer, pointer + 4 * total)) : null;
  postMessage({ type: "reports", reports, params }, params ? [params.buffer] : []);
}

// The next turn as a posted message (setTimeout's nesting clamp would idle 4 ms after each turn).
const turns = new MessageChannel();
turns.port1.onmessage = () => loop();
const nextTurn = () => turns.port2.postMessage(0);

function loop() {
  // The page's messages are handled between turns: each turn returns to the event loop.
  const busy = call("tw_work", { ret: "number", args: ["number"] }, [20]);
  const now = performance.now();
  if (busy === 0 || now - lastReport >= REPORT_MS) {  // and a last one when all is done
    report();
    lastReport = now;
  }
  if (busy > 0) nextTurn();
  else running = false;
}

self.onmessage = (event) => {
  const message = event.data;
  if (message.type === "load") {
    loadWorkerWasm(message, "train_worker", "the trainer's wasm", () => {
      ready = true;
      while (queue.length) handle(queue.shift());
    });
    return;
  }
  if (!ready) queue.push(message);
  else handle(message);
};
