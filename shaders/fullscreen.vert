// The vertex stage of every pass: one triangle that covers the whole render target, so each
// fragment is one output texel. Not geometry: there are no vertex buffers, only gl_VertexID.
void main() {
  // vertices 0, 1, 2 -> (0,0), (2,0), (0,2): a triangle twice the target's size, clipped to it
  vec2 corner = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
  gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
