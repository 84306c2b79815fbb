package memsync

import (
	"time"

	"github.com/memsync/memsync/memsync/score"
)

// HistoryPoint is one point of a memory's history (package read,
// History): its importance, confidence and status as they stood at one
// instant.
type HistoryPoint struct {
	At         time.Time
	Importance float64
	Confidence float64
	Status     score.Status
	// Kind is what happened at At: "written", the kind of the event
	// (feedback, outcome, decay, ...) or "now" for the clock itself.
	Kind string
}
