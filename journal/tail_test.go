package journal_test

import (
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
)

func TestCompleteLength(t *testing.T) {
	long := strings.Repeat("x", 5000)
	for _, tc := range []struct {
		name, data string
		want       int64
	}{
		{"empty", "", 0},
		{"no newline", "{\"a\":1}", 0},
		{"whole lines", "a\nb\n", 4},
		{"torn tail", "a\nb\n{\"torn", 4},
		{"newline far back", "a\n" + long, 2},
		{"long whole line", long + "\n", 5001},
		{"torn after long line", long + "\n" + long, 5001},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := journal.CompleteLength(strings.NewReader(tc.data), int64(len(tc.data)))
			if err != nil || got != tc.want {
				t.Fatalf("CompleteLength = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}
