package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// uiState is what the daemon says of the web view it serves (run --ui),
// in .memsync/ui.json: where it serves it, or why it could not. status
// reads it while that daemon runs, so a view that failed to start (a busy
// port) is seen without reading the daemon's log.
type uiState struct {
	PID   int       `json:"pid"`
	Addr  string    `json:"addr"`          // as asked (--ui)
	URL   string    `json:"url,omitempty"` // where it serves, once listening
	Error string    `json:"error,omitempty"`
	Since time.Time `json:"since"`
}

func uiStateFile(repo string) string { return filepath.Join(layout(repo).LocalDir(), "ui.json") }

// writeUIState replaces the daemon's web view state; a failure only
// costs status its line.
func writeUIState(repo string, st uiState) {
	st.PID = os.Getpid()
	data, err := json.Marshal(st)
	if err != nil {
		return
	}
	_ = os.MkdirAll(filepath.Dir(uiStateFile(repo)), 0o755)
	_ = journal.WriteAtomic(uiStateFile(repo), append(data, '\n'))
}

// readUIState is the web view state of the daemon d, if it wrote one: a
// file left by another process (an earlier daemon) is not its.
func readUIState(repo string, d memsync.DaemonStatus) (uiState, bool) {
	if !d.Running || d.Command != "run" {
		return uiState{}, false
	}
	data, err := os.ReadFile(uiStateFile(repo))
	if err != nil {
		return uiState{}, false
	}
	var st uiState
	if json.Unmarshal(data, &st) != nil || st.PID != d.PID {
		return uiState{}, false
	}
	return st, true
}

// uiStateLine is status's line for the daemon's web view: "http://...",
// "failed: ..." or "starting".
func uiStateLine(st uiState) string {
	switch {
	case st.Error != "":
		return "failed: " + st.Error + " (" + st.Addr + ")"
	case st.URL != "":
		return st.URL
	}
	return "starting on " + st.Addr
}

// uiErrorText is err in a few words: "address in use" for a busy port.
func uiErrorText(err error) string {
	if errors.Is(err, syscall.EADDRINUSE) {
		return "address in use"
	}
	return oneLineErr(err)
}
