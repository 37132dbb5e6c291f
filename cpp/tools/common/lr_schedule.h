// Learning-rate schedules for the tools' training loops, as llm.c's llmc/schedulers.h.
#ifndef ATTNLAB_TOOLS_COMMON_LR_SCHEDULE_H_
#define ATTNLAB_TOOLS_COMMON_LR_SCHEDULE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace attnlab::tools {

// Linear warm-up from lr/warmup to lr over steps 1 … warmup, then a cosine from lr down to lr · min_lr_ratio at
// step `steps` (and there after). Steps count from 1.
struct CosineSchedule {
  double lr = 3e-3, min_lr_ratio = 0.1;
  int64_t warmup = 200, steps = 6000;

  double At(int64_t step) const {
    if (step <= warmup) return lr * static_cast<double>(step) / static_cast<double>(warmup);
    const double progress =
        static_cast<double>(step - warmup) / static_cast<double>(std::max<int64_t>(1, steps - warmup));
    const double min_lr = lr * min_lr_ratio;
    return min_lr + 0.5 * (lr - min_lr) * (1 + std::cos(3.14159265358979323846 * std::min(1.0, progress)));
  }
};

}  // namespace attnlab::tools

#endif  // ATTNLAB_TOOLS_COMMON_LR_SCHEDULE_H_
