package memsync

import (
	"fmt"
	"os"
)

// Unprojected counts the lines of the repository's journals that the graph
// named identity has not been given yet, and the entries waiting in the
// outboxes: what a read of that graph cannot see. It is cheap enough for
// every read, whatever the number of journal files: it reads the daemon's
// summary (Summary) and, per agent, stats its journal and archive
// directories, its sequence file and its newest journal; only the lines
// that newest journal gained since the summary are read. An agent the
// summary does not describe any more (a file created or removed, a
// `memsync append`, no entry) is counted from its cursors: its cursor
// file, a stat of each journal and a read of the bytes past each cursor
// (nothing, when the daemon is keeping up). No record is parsed, so a line
// the daemon will reject counts until the daemon has passed it. Cursors
// made for another graph (identity differs; "" trusts them whatever graph
// they name) count every line, as Status does; so does a summary made for
// another graph: it is not read.
//
// What it may miss: a line written, by a tool other than memsync append,
// into a journal file other than the agent's newest one (an older day),
// once the summary was written, until the daemon's next pass.
func Unprojected(layout Layout, identity string) (int, error) {
	sum, haveSum := LoadSummary(layout)
	if haveSum && identity != "" && sum.Graph != identity {
		haveSum = false
	}
	agents, err := layout.Agents()
	if err != nil {
		return 0, err
	}
	total := 0
	for _, a := range agents {
		if haveSum {
			if s, ok := sum.Agents[a]; ok {
				if fresh, grown := s.fresh(layout, a); fresh {
					total += s.Waiting + s.Outbox
					if grown != "" {
						journalOpens.Add(1)
						n, err := countLines(grown, s.LastEnd)
						if err != nil {
							return 0, fmt.Errorf("%s: %w", layout.Rel(grown), err)
						}
						total += n
					}
					continue
				}
			}
		}
		n, err := unprojectedAgent(layout, a, identity)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// unprojectedAgent is Unprojected for one agent, from its cursors: a stat
// of each journal, a read of those that grew past their cursor.
func unprojectedAgent(layout Layout, a, identity string) (int, error) {
	state, err := LoadState(layout.StateFile(a))
	if err != nil || identity != "" && state.Graph != "" && state.Graph != identity {
		state = newState("")
	}
	total, err := countLines(layout.OutboxFile(a), state.OutboxDone)
	if err != nil {
		return 0, fmt.Errorf("%s's outbox: %w", a, err)
	}
	files, err := layout.JournalFiles(a)
	if err != nil {
		return 0, fmt.Errorf("%s's journals: %w", a, err)
	}
	for _, path := range files {
		off := state.Files[layout.Rel(path)].Offset
		if fi, err := os.Stat(path); err != nil || fi.Size() <= off {
			continue // gone, or nothing past the cursor
		}
		journalOpens.Add(1)
		n, err := countLines(path, off)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", layout.Rel(path), err)
		}
		total += n
	}
	return total, nil
}
