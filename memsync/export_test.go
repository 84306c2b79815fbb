package memsync

import "os"

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

// SpillToFullDisk makes verify's spill files fail every write as a full
// disk does (/dev/full: ENOSPC), until the test ends.
func SpillToFullDisk(t interface{ Cleanup(func()) }) { SpillToFullDiskAfter(t, 0) }

// SpillToFullDiskAfter is SpillToFullDisk for the spill files after the
// first n.
func SpillToFullDiskAfter(t interface{ Cleanup(func()) }, n int) {
	was := createSpillFile
	createSpillFile = func(dir string) (*os.File, error) {
		if n > 0 {
			n--
			return was(dir)
		}
		return os.OpenFile("/dev/full", os.O_RDWR, 0)
	}
	t.Cleanup(func() { createSpillFile = was })
}

// ListInRunsOf sorts a ReferenceListing in runs of n until the test ends.
func ListInRunsOf(t interface{ Cleanup(func()) }, n int) {
	was := listRun
	listRun = n
	t.Cleanup(func() { listRun = was })
}
