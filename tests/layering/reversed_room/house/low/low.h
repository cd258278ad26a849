#pragma once
#include "house/top.h"
