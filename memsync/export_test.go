package memsync

// LocateLine is locateLine, for the fuzz target.
var LocateLine = locateLine

// IdleCounts is how many ticks Run has taken and how many agents its
// passes have read.
func (e *Engine) IdleCounts() (ticks, agentReads int64) {
	return e.ticks.Load(), e.agentReads.Load()
}

// RescanTicks is rescanTicks.
const RescanTicks = rescanTicks

// CloseTallyFile closes t's file under it, as a failing disk would fail it.
func CloseTallyFile(t *JournalTally) error { return t.spill.Close() }

// JournalOpens is how many journal files Unprojected and the summary's
// readers have opened so far.
func JournalOpens() int64 { return journalOpens.Load() }
