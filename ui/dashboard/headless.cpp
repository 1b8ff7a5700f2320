// run_dashboard in a build made with -DORRERY_UI=OFF (headless GPU nodes: no GL, GLFW or X11).
// Everything else of `orrery ui`'s side stays: argument checks, `orrery plot`, orrery.plot.
#include "dashboard.h"

#include "orrery/error.h"

namespace orrery::ui {

int run_dashboard(const DashboardOptions&, BackgroundJob*) {
  throw Error("this orrery was built without the dashboard (-DORRERY_UI=OFF, a headless build): "
              "`orrery plot RUN_DIR` writes its views as SVG files, or rebuild with -DORRERY_UI=ON");
}

}  // namespace orrery::ui
