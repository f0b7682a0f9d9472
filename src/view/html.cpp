// The page: web/viewer/viewer.html with the style sheet, the script and the scene put in place.
#include <initializer_list>
#include <string>
#include <utility>

#include "amanda/view/scene.h"

namespace amanda::view {

namespace assets {
extern const unsigned char kHtml[], kCss[], kJs[];
}

namespace {

// Replaces the markers of the template (only there: the inserted texts may contain anything).
std::string fill(std::string_view tpl, std::initializer_list<std::pair<std::string_view, std::string_view>> parts) {
  std::string page;
  while (!tpl.empty()) {
    size_t best = std::string_view::npos;
    const std::pair<std::string_view, std::string_view>* hit = nullptr;
    for (const auto& p : parts) {
      size_t at = tpl.find(p.first);
      if (at < best) best = at, hit = &p;
    }
    if (!hit) break;
    page += tpl.substr(0, best);
    page += hit->second;
    tpl.remove_prefix(best + hit->first.size());
  }
  page += tpl;
  return page;
}

}  // namespace

std::string scene_html(const ir::Graph& g, const SceneOptions& o) {
  std::string title;
  for (char c : o.title) title += c == '<' ? std::string("&lt;") : c == '&' ? std::string("&amp;") : std::string(1, c);
  std::string scene = scene_json(g, o);
  auto text = [](const unsigned char* s) { return std::string_view(reinterpret_cast<const char*>(s)); };
  return fill(text(assets::kHtml), {{"@TITLE@", title}, {"/*@STYLE@*/", text(assets::kCss)},
                                    {"/*@SCRIPT@*/", text(assets::kJs)}, {"@SCENE@", scene}});
}

}  // namespace amanda::view
