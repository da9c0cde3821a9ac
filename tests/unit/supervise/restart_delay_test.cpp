#include <gtest/gtest.h>

#include "core/error.h"
#include "supervise/supervisor.h"

namespace llmesh::supervise {

TEST(RestartDelay, DoublesFromOneSecondUpToThirty) {
  const double want[] = {1, 2, 4, 8, 16, 30, 30};
  for (int i = 0; i < 7; ++i) EXPECT_EQ(restart_delay_s(i + 1), want[i]) << "restart " << i + 1;
  EXPECT_EQ(restart_delay_s(1000), 30);
}

TEST(Supervise, NoCommandIsAClearError) {
  EXPECT_THROW(supervise(SupervisorOptions{}), Error);
}

}  // namespace llmesh::supervise
