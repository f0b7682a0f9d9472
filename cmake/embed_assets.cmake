# Turns the viewer's files (web/viewer/) into C arrays, so `amanda view` writes a page that needs
# nothing at view time. Run by the build: cmake -DDIR=... -DOUT=... -P embed_assets.cmake
set(content "// Generated from web/viewer/ by cmake/embed_assets.cmake; do not edit.\nnamespace amanda::view::assets {\n")
set(files viewer.html viewer.css viewer.js)
set(names kHtml kCss kJs)
foreach(file name IN ZIP_LISTS files names)
  file(READ "${DIR}/${file}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(APPEND content "extern const unsigned char ${name}[] = {${bytes}0};\n")
endforeach()
string(APPEND content "}  // namespace amanda::view::assets\n")
file(WRITE "${OUT}.tmp" "${content}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
