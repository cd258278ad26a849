#include "high/high.h"
int Low() { return 1; }
