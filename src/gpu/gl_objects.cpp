// GL building blocks shared by the attention passes and the matrix images (see gl_objects.h).
// Not drawing logic: each pass decides its own inputs and targets.
#include "gl_objects.h"

#include <cstdio>

namespace gpu {

PassState::PassState() {
  // what the passes need: every fragment written as computed, rows of floats without padding
  glDisable(GL_BLEND);
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_STENCIL_TEST);
  glDisable(GL_CULL_FACE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  glPixelStorei(GL_PACK_ROW_LENGTH, 0);
}

PassState::~PassState() {
  glBindFramebuffer(GL_FRAMEBUFFER, 0);  // the canvas / window again, for the frame's clear
  glBindVertexArray(0);
  glActiveTexture(GL_TEXTURE0);
}

void allocate_texture(Texture& texture, GLenum internal_format, GLenum format, GLenum type, int width, int height) {
  if (!texture.id) {
    glGenTextures(1, &texture.id);
    glBindTexture(GL_TEXTURE_2D, texture.id);
    // float textures cannot be filtered without an extension; texelFetch ignores filtering anyway
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  }
  glBindTexture(GL_TEXTURE_2D, texture.id);
  if (texture.width == width && texture.height == height) return;
  glTexImage2D(GL_TEXTURE_2D, 0, static_cast<GLint>(internal_format), width, height, 0, format, type, nullptr);
  texture.width = width;
  texture.height = height;
}

bool allocate_target(RenderTarget& target, GLenum internal_format, GLenum format, GLenum type, int width, int height) {
  const bool unchanged = target.framebuffer && target.texture.width == width && target.texture.height == height;
  allocate_texture(target.texture, internal_format, format, type, width, height);
  if (unchanged) return target.complete;  // the status check waits for the GPU: only after a change
  if (!target.framebuffer) glGenFramebuffers(1, &target.framebuffer);
  glBindFramebuffer(GL_FRAMEBUFFER, target.framebuffer);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, target.texture.id, 0);
  target.complete = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
  return target.complete;
}

void release(Texture& texture) {
  if (texture.id) glDeleteTextures(1, &texture.id);
  forget(texture);
}
void release(RenderTarget& target) {
  if (target.framebuffer) glDeleteFramebuffers(1, &target.framebuffer);
  release(target.texture);
  forget(target);
}
void forget(Texture& texture) { texture = Texture{}; }
void forget(RenderTarget& target) { target = RenderTarget{}; }

namespace {

bool read_text(const std::string& path, std::string* text) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) return false;
  text->clear();
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file)) > 0;) text->append(buf, n);
  const bool ok = !std::ferror(file);
  std::fclose(file);
  return ok;
}

// Compiles one shader of shaders/; 0 and `error` on failure.
GLuint compile_shader(GLenum stage, const char* file_name, std::string* error) {
  std::string source;
  if (!read_text(shader_path(file_name), &source)) {
    *error = std::string("shader ") + file_name + ": cannot read " + shader_path(file_name);
    return 0;
  }
  // #line 1: the info log then counts lines of the file itself, not of the header before it
  const std::string full_source = glsl_header() + std::string("#line 1\n") + source;
  const char* text = full_source.c_str();
  const GLuint shader = glCreateShader(stage);
  glShaderSource(shader, 1, &text, nullptr);
  glCompileShader(shader);
  GLint compiled = GL_FALSE;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &compiled);
  if (compiled) return shader;
  GLint log_length = 0;
  glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &log_length);
  std::string log(static_cast<std::size_t>(log_length > 1 ? log_length : 1), '\0');
  glGetShaderInfoLog(shader, static_cast<GLsizei>(log.size()), nullptr, &log[0]);
  *error = std::string("shader ") + file_name + " does not compile:\n" + log.c_str();
  glDeleteShader(shader);
  return 0;
}

}  // namespace

GLuint build_program(const char* vertex_file, const char* fragment_file, std::string* error) {
  const GLuint vertex = compile_shader(GL_VERTEX_SHADER, vertex_file, error);
  const GLuint fragment = vertex ? compile_shader(GL_FRAGMENT_SHADER, fragment_file, error) : 0;
  GLuint program = 0;
  if (vertex && fragment) {
    program = glCreateProgram();
    glAttachShader(program, vertex);
    glAttachShader(program, fragment);
    glLinkProgram(program);
    GLint linked = GL_FALSE;
    glGetProgramiv(program, GL_LINK_STATUS, &linked);
    if (!linked) {
      GLint log_length = 0;
      glGetProgramiv(program, GL_INFO_LOG_LENGTH, &log_length);
      std::string log(static_cast<std::size_t>(log_length > 1 ? log_length : 1), '\0');
      glGetProgramInfoLog(program, static_cast<GLsizei>(log.size()), nullptr, &log[0]);
      *error = std::string("shaders ") + vertex_file + " + " + fragment_file + " do not link:\n" + log.c_str();
      glDeleteProgram(program);
      program = 0;
    }
  }
  if (vertex) glDeleteShader(vertex);  // the program keeps what it needs
  if (fragment) glDeleteShader(fragment);
  if (!program) std::fprintf(stderr, "error: %s\n", error->c_str());
  return program;
}

void begin_pass(GLuint program, const RenderTarget& target) {
  glBindFramebuffer(GL_FRAMEBUFFER, target.framebuffer);
  glViewport(0, 0, target.texture.width, target.texture.height);
  glUseProgram(program);
}

void bind_input(GLuint program, const char* name, int unit, const Texture& texture) {
  bind_input(glGetUniformLocation(program, name), unit, texture);
}

void bind_input(GLint location, int unit, const Texture& texture) {
  glActiveTexture(GL_TEXTURE0 + unit);
  glBindTexture(GL_TEXTURE_2D, texture.id);
  glUniform1i(location, unit);
}

void draw_full_target() { glDrawArrays(GL_TRIANGLES, 0, 3); }

void clear_gl_errors() {
  for (int i = 0; i < 32 && glGetError() != GL_NO_ERROR; ++i) {
  }
}

}  // namespace gpu
