// Package mapped reads a file in place: mapped read-only into the
// process's memory where the system allows it, read whole otherwise.
// memsync maps the files it only ever replaces by a rename (the surprise
// gate's index, the embedded store's vectors.idx), so the bytes never
// change under a reader; a file truncated in place by hand while a process
// reads it would fault that process (SIGBUS), as it would any program that
// maps files.
package mapped
