package ledger

import (
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/memsync/memsync/journal"
)

// Owned reports whether rel (slash-separated, relative to the work tree) is a
// file the Committer commits:
//
//	agents/<agent>/memory/MEMORY.md
//	agents/<agent>/memory/entities/<name>.md
//	agents/<agent>/memory/journal/<name>.jsonl
//	agents/<agent>/memory/journal/archive/<name>.jsonl
//
// Nothing else: not sync/ or .memsync/ (host-local state), not cache/ (a
// projection regenerated from the graph; committing it would add a commit
// every time the graph changes and make history noisy without adding truth),
// not temporary files, not files a person keeps elsewhere in the repository.
func Owned(rel string) bool {
	parts := strings.Split(rel, "/")
	if len(parts) < 4 || parts[0] != "agents" || !journal.ValidAgent(parts[1]) || parts[2] != "memory" {
		return false
	}
	name := parts[len(parts)-1]
	if name == "" || strings.HasPrefix(name, ".") {
		return false
	}
	switch rest := parts[3:]; {
	case len(rest) == 1:
		return rest[0] == "MEMORY.md"
	case len(rest) == 2 && rest[0] == "entities":
		return strings.HasSuffix(name, ".md")
	case len(rest) == 2 && rest[0] == "journal":
		return strings.HasSuffix(name, ".jsonl")
	case len(rest) == 3 && rest[0] == "journal" && rest[1] == "archive":
		return strings.HasSuffix(name, ".jsonl")
	}
	return false
}

// isJournal reports whether an owned path is an append-only journal (whose
// last line may still be being written).
func isJournal(rel string) bool { return strings.HasSuffix(rel, ".jsonl") }

// ownedFiles lists the owned regular files present in the work tree, sorted.
func ownedFiles(root string) ([]string, error) {
	agents, err := os.ReadDir(filepath.Join(root, "agents"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range agents {
		if !a.IsDir() || !journal.ValidAgent(a.Name()) {
			continue
		}
		mem := path.Join("agents", a.Name(), "memory")
		for _, dir := range []string{mem, mem + "/entities", mem + "/journal", mem + "/journal/archive"} {
			abs := filepath.Join(root, filepath.FromSlash(dir))
			if journal.RealDir(root, abs) != nil {
				continue // never through a link: it may lead out of the repository
			}
			entries, err := os.ReadDir(abs)
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				rel := dir + "/" + e.Name()
				if e.Type().IsRegular() && Owned(rel) {
					out = append(out, rel)
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}
