# The ImGui explainer: the same sources for the web (Emscripten GLFW + WebGL2) and natively
# (GLFW + OpenGL 3.3 core). Included from CMakeLists.txt when IMGUI_DIR is set.

# The UI font: DejaVu Sans cut down at build time to the characters the app draws (~80 KB
# instead of ~750 KB). Natively it is embedded as a byte array; on the web it is a file of the
# site (dist/ui_font.ttf), shared by the SIMD and baseline builds and loaded by web/explainer.js.
set(FONT_SUBSET ${CMAKE_BINARY_DIR}/assets/ui_font.ttf)
set(FONT_SOURCE ${CMAKE_BINARY_DIR}/assets/ui_font.cpp)
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/assets)
set(FONT_UNICODES "U+0020-017F,U+0391-03A9,U+03B1-03C9,U+1D40,U+1D62,U+2010-205E,U+2070-209F,U+2190-21AF,U+21B5,U+2200-221E,U+2223-222B,U+2248,U+2260-2265,U+2299,U+22C5,U+2580-259F,U+2605,U+2713-2718,U+2C7C,U+FFFD")
# (keep in step with kGlyphRanges in src/app/fonts.cpp). Latin-1 and Latin Extended-A, the Greek alphabet, and
# of the arrows and the mathematical operators the ones the app's texts and formulas use: the whole blocks of
# Greek, arrows and operators cost 20 KB gzip of the first load. The rest of them is in the
# "latin-cyrillic-greek" and "symbols" fallback fonts, fetched when a learner's text has one.
add_custom_command(
  OUTPUT ${FONT_SUBSET}
  COMMAND /usr/bin/python3 -m fontTools.subset ${FONT_TTF} --unicodes=${FONT_UNICODES} --no-hinting --layout-features="" --output-file=${FONT_SUBSET}
  DEPENDS ${FONT_TTF}
  COMMENT "Subsetting the UI font")
add_custom_command(
  OUTPUT ${FONT_SOURCE}
  COMMAND ${CMAKE_COMMAND} -DIN=${FONT_SUBSET} -DOUT=${FONT_SOURCE} -DNAME=ui_font_ttf -P ${CMAKE_SOURCE_DIR}/cmake/embed_file.cmake
  DEPENDS ${FONT_SUBSET} ${CMAKE_SOURCE_DIR}/cmake/embed_file.cmake
  COMMENT "Embedding the UI font")

# The fallback fonts for the scripts the UI font lacks (DejaVu and Noto from Debian, one file per
# script group, each cut down to the characters of that group): never part of the first load, fetched
# (web: dist/fonts/) or read (natively: the build's assets/fonts/) when text needs them. The script
# writes the table of the groups as a header for src/app/fonts.cpp.
set(FALLBACK_FONT_DIR ${CMAKE_BINARY_DIR}/assets/fonts)
set(FALLBACK_FONT_HEADER ${CMAKE_BINARY_DIR}/generated/fallback_fonts.h)
add_custom_command(
  OUTPUT ${FALLBACK_FONT_HEADER}
  COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tools/subset_fallback_fonts.py ${FALLBACK_FONT_DIR} ${FALLBACK_FONT_HEADER} ${FONT_UNICODES}
  DEPENDS ${CMAKE_SOURCE_DIR}/tools/subset_fallback_fonts.py
  COMMENT "Subsetting the fallback fonts (Noto, DejaVu)")
add_custom_target(fallback_fonts DEPENDS ${FALLBACK_FONT_HEADER})

add_library(imgui STATIC
  ${IMGUI_DIR}/imgui.cpp ${IMGUI_DIR}/imgui_draw.cpp ${IMGUI_DIR}/imgui_tables.cpp ${IMGUI_DIR}/imgui_widgets.cpp
  ${IMGUI_DIR}/imgui_demo.cpp
  ${IMGUI_DIR}/backends/imgui_impl_glfw.cpp)  # the renderer is the app's own: src/gpu/imgui_renderer.cpp
target_include_directories(imgui PUBLIC ${IMGUI_DIR} ${IMGUI_DIR}/backends)
# 32-bit characters: text beyond U+FFFF (emoji, rare ideographs) reaches the atlas as itself, so it
# can at least be drawn as its "U+XXXXX" box instead of one shared replacement mark.
target_compile_definitions(imgui PUBLIC IMGUI_USE_WCHAR32)
target_compile_options(imgui PRIVATE -w)
if(EMSCRIPTEN)
  # Download size matters more than speed for the UI code (the kernels in attn_core stay at -O3).
  target_compile_options(imgui PRIVATE -Os)
endif()
if(EMSCRIPTEN)
  target_link_options(imgui PUBLIC -sUSE_GLFW=3)
else()
  find_package(glfw3 REQUIRED)
  find_package(OpenGL REQUIRED)
  target_link_libraries(imgui PUBLIC glfw OpenGL::GL ${CMAKE_DL_LIBS})
endif()

file(GLOB UI_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/ui/*.cpp)
list(REMOVE_ITEM UI_SOURCES ${CMAKE_SOURCE_DIR}/src/ui/app_state.cpp ${CMAKE_SOURCE_DIR}/src/ui/input_table.cpp
  ${CMAKE_SOURCE_DIR}/src/ui/palette.cpp
  ${CMAKE_SOURCE_DIR}/src/ui/check_answers.cpp ${CMAKE_SOURCE_DIR}/src/ui/family_views.cpp)  # in attn_state
file(GLOB APP_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/app/*.cpp)
file(GLOB GPU_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/gpu/*.cpp)
if(EMSCRIPTEN)
  add_custom_target(ui_font ALL DEPENDS ${FONT_SUBSET})
  add_executable(attention_explainer ${APP_SOURCES} ${UI_SOURCES} ${GPU_SOURCES})
  add_dependencies(attention_explainer ui_font)
else()
  add_executable(attention_explainer ${APP_SOURCES} ${UI_SOURCES} ${GPU_SOURCES} ${FONT_SOURCE})
endif()
target_link_libraries(attention_explainer PRIVATE attn_state imgui)
set_target_properties(attention_explainer PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 12)  # (CMakeLists.txt: unity builds)
add_dependencies(attention_explainer fallback_fonts)
target_include_directories(attention_explainer PRIVATE ${CMAKE_BINARY_DIR}/generated)
target_compile_definitions(attention_explainer PRIVATE ATTN_FONT_DIR="${FALLBACK_FONT_DIR}")
if(EMSCRIPTEN)
  target_compile_options(attention_explainer PRIVATE -Os)
  # Linked at -O2 (after Release's -O3): the first page load must stay under 1 MB gzip. Measured on the
  # SIMD build: -O2 852 KB gzip of wasm, -Os 858 KB, -O3 884 KB; SmolLM2's forward at T = 256 2.16 s
  # at -O2, 2.61 s at -Os, 2.11 s at -O3.
  target_link_options(attention_explainer PRIVATE -O2)
endif()
target_compile_definitions(attention_explainer PRIVATE ATTN_SHADER_DIR="${CMAKE_SOURCE_DIR}/shaders")

# The trained model the app offers from its first frame (see CMakeLists.txt: trained_model). Natively
# it is read from the build folder at start; the page fetches the same folder (dist/models/trained,
# ./build_wasm.sh site copies it) when the learner chooses it, so it is not in the first load.
if(NOT EMSCRIPTEN)
  add_dependencies(attention_explainer trained_model)
  target_compile_definitions(attention_explainer PRIVATE ATTN_TRAINED_MODEL_DIR="${ATTN_SHIPPED_MODEL_DIR}")
endif()

if(EMSCRIPTEN)
  set_target_properties(attention_explainer PROPERTIES OUTPUT_NAME explainer SUFFIX ".js")
  # Memory grows on demand up to wasm32's 4 GB (a 548 MB GPT-2 small as floats needs ~0.7 GB);
  # past 2 GB emcc makes the glue's pointers unsigned (web/explainer.js does the same with >>> 0).
  # It grows 4 MB at a time: wasm memory never shrinks, and the default (20 % of what is there) left
  # a 257 MB model's page with ~57 MB it never used (16 MB steps: up to 16).
  target_link_options(attention_explainer PRIVATE
    -sUSE_GLFW=3 -sMIN_WEBGL_VERSION=2 -sMAX_WEBGL_VERSION=2 -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sMEMORY_GROWTH_LINEAR_STEP=4MB
    -sEXPORTED_RUNTIME_METHODS=ccall,cwrap,lengthBytesUTF8,stringToUTF8 -sEXPORTED_FUNCTIONS=_main,_malloc,_free
    -sENVIRONMENT=web -sINITIAL_MEMORY=8388608
    "SHELL:--embed-file ${CMAKE_SOURCE_DIR}/shaders@/shaders")
  # the link must run again when a shader changes (they are embedded in the wasm)
  file(GLOB SHADER_FILES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/shaders/*)
  set_property(TARGET attention_explainer APPEND PROPERTY LINK_DEPENDS ${SHADER_FILES})
endif()

# The train view's Web Worker (web only): the trainer without the app, loaded by web/train_worker.js
# when the train view first shows (not part of the first load).
if(EMSCRIPTEN)
  add_executable(attention_train_worker ${CMAKE_SOURCE_DIR}/src/worker/train_worker.cpp)
  target_link_libraries(attention_train_worker PRIVATE attn_train)  # core + train: nothing of the app
  set_target_properties(attention_train_worker PROPERTIES OUTPUT_NAME train_worker SUFFIX ".js")
  target_link_options(attention_train_worker PRIVATE --no-entry -sENVIRONMENT=worker -sALLOW_MEMORY_GROWTH=1
    -sMAXIMUM_MEMORY=4GB -sEXPORTED_RUNTIME_METHODS=ccall -sEXPORTED_FUNCTIONS=_malloc,_free)
endif()

# The loaded model's Web Worker (web only): the forward without the app, loaded by web/model_worker.js
# when a model is first loaded (not part of the first load).
if(EMSCRIPTEN)
  add_executable(attention_model_worker ${CMAKE_SOURCE_DIR}/src/worker/model_worker.cpp)
  target_link_libraries(attention_model_worker PRIVATE attn_api)  # core + the JSON of traces: nothing of the app
  set_target_properties(attention_model_worker PROPERTIES OUTPUT_NAME model_worker SUFFIX ".js")
  target_link_options(attention_model_worker PRIVATE --no-entry -sENVIRONMENT=worker -sALLOW_MEMORY_GROWTH=1
    -sMAXIMUM_MEMORY=4GB -sMEMORY_GROWTH_LINEAR_STEP=4MB -sEXPORTED_RUNTIME_METHODS=ccall,lengthBytesUTF8,stringToUTF8
    -sEXPORTED_FUNCTIONS=_malloc,_free)
endif()
