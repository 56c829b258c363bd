// A UDF that does not compile: the builder must report the compiler output.
#include "flow_func/meta_flow_func.h"

this is not C++;
