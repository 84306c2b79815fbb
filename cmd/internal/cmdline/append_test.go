package cmdline

import (
	"path/filepath"
	"testing"

	"github.com/memsync/memsync/memsync"
)

// TestJournalDirIsTheLayouts: append writes where the engine reads.
func TestJournalDirIsTheLayouts(t *testing.T) {
	l := memsync.Layout{Root: "/r"}
	if got, want := filepath.Join("/r", journalDir("a-1")), l.JournalDir("a-1"); got != want {
		t.Errorf("journalDir %s, memsync.Layout.JournalDir %s", got, want)
	}
	if got, want := filepath.Join("/r", sequenceFile("a-1")), l.SequenceFile("a-1"); got != want {
		t.Errorf("sequenceFile %s, memsync.Layout.SequenceFile %s", got, want)
	}
}
