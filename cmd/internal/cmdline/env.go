// Package cmdline is the command-line layer shared by memsync's two
// binaries: the process environment a command runs in, flag sets with
// memsync's usage conventions, repository and configuration resolution
// (DefaultConfig, memsync.yaml, MEMSYNC_* environment, flags), the command
// list with its dispatcher, the append command, and the --json documents
// of the commands another door reads (explain, flag).
//
// The small front binary (cmd/memsync) links
// this package to run `memsync append` itself, so it must stay light: it
// imports journal and the standard library's light packages, never the
// engine, a graph backend, zap or go-git, whose package initialisers would
// add milliseconds to every append. TestImportsStayLight holds it to that.
package cmdline

import (
	"io"
	"os"
	"time"
)

// Exit codes of every command (SPEC §5).
const (
	ExitOK    = 0
	ExitFail  = 1
	ExitUsage = 2
	// ExitNotFound: a uuid no memory has, or one the reading agent may
	// not see (the same answer, so that the code leaks nothing).
	ExitNotFound = 3
)

// Env is everything a command takes from its process, so that tests run
// commands in-process with their own streams, environment and clock.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Now            func() time.Time
	// Getwd is the working directory, the last resort for --repo;
	// os.Getwd when nil.
	Getwd func() (string, error)
	// Embedder resolves an --embedder other than none (tests set a test
	// embedder here); nil: the binary's own models.
	Embedder func(spec string) (Embedder, error)
}

// OSEnv is the Env of the running process.
func OSEnv() *Env {
	return &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Now: time.Now, Getwd: os.Getwd}
}

// Embedder is memsync.Embedder's method set, declared here so that the
// front binary, which links this package, does not link the engine (a
// value of either type converts to the other).
type Embedder interface {
	Embed(text string) []float32
	Dim() int
	Version() string
}
