package memsync

import "fmt"

// Unprojected counts the lines of the repository's journals that the graph
// named identity has not been given yet, and the entries waiting in the
// outboxes: what a read of that graph cannot see. It is cheap enough for
// every read: per agent it reads the cursor file, stats each journal and
// counts the newlines past the journal's cursor (nothing, when the daemon
// is keeping up), parsing no record; so a line the daemon will reject
// counts until the daemon has passed it. Cursors made for another graph
// (identity differs; "" trusts them whatever graph they name) count every
// line, as Status does.
func Unprojected(layout Layout, identity string) (int, error) {
	agents, err := layout.Agents()
	if err != nil {
		return 0, err
	}
	total := 0
	for _, a := range agents {
		state, err := LoadState(layout.StateFile(a))
		if err != nil || identity != "" && state.Graph != "" && state.Graph != identity {
			state = newState("")
		}
		n, err := countLines(layout.OutboxFile(a), state.OutboxDone)
		if err != nil {
			return 0, fmt.Errorf("%s's outbox: %w", a, err)
		}
		total += n
		files, err := layout.JournalFiles(a)
		if err != nil {
			return 0, fmt.Errorf("%s's journals: %w", a, err)
		}
		for _, path := range files {
			n, err := countLines(path, state.Files[layout.Rel(path)].Offset)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", layout.Rel(path), err)
			}
			total += n
		}
	}
	return total, nil
}
