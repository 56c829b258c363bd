// Umbrella header of hflow's host API.
#ifndef HFLOW_HFLOW_H_
#define HFLOW_HFLOW_H_

#include "hflow/cluster.h"
#include "hflow/context_guard.h"
#include "hflow/ctxcheck.h"
#include "hflow/graph.h"
#include "hflow/rt.h"
#include "hflow/session.h"
#include "hflow/status.h"
#include "hflow/types.h"

#endif  // HFLOW_HFLOW_H_
