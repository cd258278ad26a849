#include "house/high/high.h"
#include "house/low/low.h"
int Low() { return 1; }
