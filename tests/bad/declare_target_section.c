// EXPECT: 4: declare target takes names of variables and functions
/* A list item of declare target is a name, not a section. */
int a[10];
#pragma omp declare target enter(a[0:5])
