#include "house/low/low.h"
#include "house/high/high.h"
int Low() { return 1; }
