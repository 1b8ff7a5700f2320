#include "dashboard.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <dlfcn.h>
#include <link.h>
#include <stb_image_write.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "app.h"
#include "orrery/error.h"
#include "orrery/json.h"
#include "runs/run_watcher.h"

namespace orrery::ui {

namespace {

std::string g_glfw_error;

void on_glfw_error(int code, const char* what) { g_glfw_error = what ? what : std::to_string(code); }

}  // namespace
}  // namespace orrery::ui

// Defined only in a process with LeakSanitizer (make sanitize); weak, so it tells which.
extern "C" void __lsan_do_leak_check() __attribute__((weak));

namespace orrery::ui {
namespace {

// Under LeakSanitizer only: libGL unloads Mesa's DRI driver (swrast_dri.so and its hard links)
// when the window closes, unmapping the driver's globals that still point at two 56-byte blocks
// of its own; the leak check at exit then reports them as leaked, from a library no longer
// there to name or suppress. Marking the loaded driver RTLD_NODELETE keeps it, and its
// pointers, until the check. Elsewhere nothing changes.
void keep_gl_driver_for_leak_check() {
  if (!__lsan_do_leak_check) return;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void*) {
        const std::string_view name = info->dlpi_name ? info->dlpi_name : "";
        if (name.ends_with("_dri.so")) dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
        return 0;
      },
      nullptr);
}

void style_imgui() {
  ImGui::StyleColorsDark();
  ImGuiStyle& s = ImGui::GetStyle();
  s.WindowPadding = {10, 8};
  s.FramePadding = {6, 3};
  s.ItemSpacing = {8, 6};
  s.FrameRounding = s.GrabRounding = s.TabRounding = 3;
  s.WindowBorderSize = 0;
  const plot::Color bg = {0x15, 0x17, 0x1c, 255};
  s.Colors[ImGuiCol_WindowBg] = {bg.r / 255.f, bg.g / 255.f, bg.b / 255.f, 1};
  s.Colors[ImGuiCol_ChildBg] = {0, 0, 0, 0};
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // no imgui.ini: every start (and every screenshot) looks the same
  for (const char* f : {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"})
    if (std::filesystem::exists(f) && io.Fonts->AddFontFromFileTTF(f, 15.f)) return;
  io.Fonts->AddFontDefault();
}

// The back buffer as a PNG: the whole frame, or `region` of it (window coordinates, scaled to the
// framebuffer's pixels).
void write_png(const std::string& path, int fb_w, int fb_h, std::optional<plot::Rect> region = std::nullopt) {
  int x = 0, y = 0, w = fb_w, h = fb_h;
  if (region) {
    const float scale = static_cast<float>(fb_w) / std::max(ImGui::GetIO().DisplaySize.x, 1.f);
    x = std::clamp(static_cast<int>(region->x0 * scale), 0, fb_w - 1);
    w = std::clamp(static_cast<int>(region->x1 * scale), x + 1, fb_w) - x;
    const int top = std::clamp(static_cast<int>(region->y0 * scale), 0, fb_h - 1);
    h = std::clamp(static_cast<int>(region->y1 * scale), top + 1, fb_h) - top;
    y = fb_h - top - h;  // OpenGL counts rows from the bottom
  }
  std::vector<unsigned char> pixels(static_cast<size_t>(w) * h * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(x, y, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  for (size_t i = 3; i < pixels.size(); i += 4) pixels[i] = 255;  // opaque, whatever GL left in alpha
  stbi_flip_vertically_on_write(1);
  const std::string tmp = path + ".tmp.png";
  if (!stbi_write_png(tmp.c_str(), w, h, 4, pixels.data(), w * 4))
    throw Error("ui: cannot write the screenshot " + path);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw Error("ui: cannot write the screenshot " + path + ": " + ec.message());
}

void write_layout(const std::string& path, int w, int h, const App& app) {
  Json frames = Json::array();
  for (const auto& f : plot::drawn_frames())
    frames.push_back({{"id", f.id},
                      {"area", {f.area.x0, f.area.y0, f.area.x1, f.area.y1}},
                      {"x", {{"lo", f.x.lo}, {"hi", f.x.hi}, {"log", f.x.log}, {"label", f.x.label}}},
                      {"y", {{"lo", f.y.lo}, {"hi", f.y.hi}, {"log", f.y.log}, {"label", f.y.label}}}});
  Json colors = Json::object();
  for (const auto& [name, c] : app.colors()) colors[name] = {c.r, c.g, c.b};
  std::ofstream out(path);
  out << Json{{"width", w}, {"height", h}, {"frames", frames}, {"colors", colors}}.dump(2) << "\n";
  if (!out) throw Error("ui: cannot write the layout " + path);
}

}  // namespace

int run_dashboard(const DashboardOptions& o, BackgroundJob* job) {
  const Tab first = parse_tab(o.view);
  const bool headless = !o.screenshot.empty();
  if (o.width < 200 || o.height < 150) throw Error("ui: --size must be at least 200x150");
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit())
    throw Error("ui: cannot open a window (" + g_glfw_error +
                "). Set DISPLAY, run under Xvfb (xvfb-run -a orrery ui ...), or write SVG files with "
                "`orrery plot RUN_DIR --out DIR`");
  struct GlfwGuard { ~GlfwGuard() { glfwTerminate(); } } glfw_guard;
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  if (headless) glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
  GLFWwindow* window = glfwCreateWindow(o.width, o.height, "Orrery", nullptr, nullptr);
  if (!window) throw Error("ui: cannot create an OpenGL 3 window (" + g_glfw_error + ")");
  glfwMakeContextCurrent(window);
  keep_gl_driver_for_leak_check();  // the context has loaded the driver
  glfwSwapInterval(headless ? 0 : 1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  style_imgui();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 130");

  RunWatcher watcher(o.runs_dir);
  watcher.poll();  // the first frame already shows what is on disk
  watcher.start(0.5, [] { glfwPostEmptyEvent(); });

  // The job runs beside the window; the UI only reads whether it ended and its exit code.
  std::atomic<bool> job_done{job == nullptr};
  std::atomic<int> job_code{0};
  std::thread worker;
  if (job)
    worker = std::thread([&] {
      int code = 1;
      try {
        code = job->run();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "orrery: %s\n", e.what());
      }
      job_code = code;
      job_done = true;
      glfwPostEmptyEvent();
    });

  App app(first, o.filter, /*show_fps=*/!headless);
  if (!o.select.empty()) app.select_eval(o.select);
  if (o.forecaster)
    app.enable_csv_forecasts(*o.forecaster, [] { glfwPostEmptyEvent(); }, o.csv, o.csv_given, o.export_prefix);
  int frames_after = 0;
  bool finished_polled = false;
  std::string error;
  while (!glfwWindowShouldClose(window)) {
    // Redraw at least 4 times a second and at once on new data; a screenshot waiting for its
    // script or a forecast idles the same way, leaving the CPU to them.
    if (headless && job_done && !app.busy()) glfwPollEvents();
    else glfwWaitEventsTimeout(0.25);
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    if (headless && o.hover_x >= 0) ImGui::GetIO().MousePos = {o.hover_x, o.hover_y};
    ImGui::NewFrame();
    plot::drawn_frames().clear();
    std::string job_line;
    if (job) {
      job_line = job->label + (job_done ? (job_code == 0 ? ": finished" : ": ended with exit code " + std::to_string(job_code.load()))
                                        : ": running");
      if (job_done && !finished_polled) watcher.poll(), finished_polled = true;  // its last lines
    }
    app.frame(*watcher.snapshot(), job_line);
    ImGui::Render();
    int w = 0, h = 0;
    glfwGetFramebufferSize(window, &w, &h);
    glViewport(0, 0, w, h);
    glClearColor(0.082f, 0.09f, 0.11f, 1.f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (auto png = app.take_png_request()) {
      try {
        write_png(png->path, w, h, png->region);
      } catch (const std::exception& e) {
        app.export_failed(e.what());
      }
    }
    // A screenshot waits for the script, and for the CSV forecast and its export.
    if (headless && job_done && !app.busy() && ++frames_after >= std::max(o.after, 1)) {
      try {
        write_png(o.screenshot, w, h);
        if (!o.layout.empty()) write_layout(o.layout, w, h, app);
      } catch (const std::exception& e) {
        error = e.what();
      }
      if (error.empty() && o.csv_given) error = app.csv_error();
      break;
    }
    glfwSwapBuffers(window);
  }
  // The window closed first: interrupt the script, again until it stops (a request made before
  // the script reached its first Lua call would otherwise be lost).
  while (job && !job_done && job->cancel) {
    job->cancel();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (worker.joinable()) worker.join();
  watcher.stop();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  if (!error.empty()) throw Error(error);
  return job ? job_code.load() : 0;
}

}  // namespace orrery::ui
