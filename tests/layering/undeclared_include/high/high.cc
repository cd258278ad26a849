#include "low/low.h"
#include "mid/mid.h"
int High() { return 1; }
