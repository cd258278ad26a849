// The `reel` command line.
int main() { return 0; }
