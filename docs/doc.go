// Package docs holds no code: its tests keep the user documentation in this
// directory and README.md honest. They run every shell recipe against the
// fake GitHub, check that every Go snippet is the body of a runnable
// Example, that the generated CLI reference matches the commands (`make
// docs` rewrites it), that every file:function the architecture page names
// exists, and that every relative link resolves.
package docs
