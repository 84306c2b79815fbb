package journal

import (
	"fmt"
	"strings"
	"time"
)

// Two lines may carry the same uuid with different content: an agent
// re-writing a record, a tool copying one, an agent squatting another's
// predictable uuids. The rules here decide, from the lines alone, which one
// a uuid stands for; the graph backends, the offline search, verify and
// rebuild all call them, so every path projects the same set of records
// the same way, whatever order the lines arrive in.

// UUIDOwner returns the agent that a uuid of the forms memsync writes names:
// mem_<YYYYMMDDTHHMMSSZ>_<agent>_<NNNN> (memsync append, four digits or
// more), mem_<YYYYMMDDTHHMMSSZ>_<agent>_<host>-<NNNN> (memsync append with
// a host id, AppendOptions.Host), either of them followed by "-" and a
// random part (AppendOptions.Random), and
// mem_<YYYYMMDDTHHMMSSZ>_<agent>_h<16 hex> (DerivedUUID). Any other uuid
// names no agent (ok false). A new uuid form that memsync writes
// must be recognised here, or lines carrying it are judged by ClashWins only.
func UUIDOwner(uuid string) (agent string, ok bool) {
	const prefix = "mem_"
	n := len(prefix) + len(uuidTimeLayout)
	if len(uuid) < n+3 || !strings.HasPrefix(uuid, prefix) || uuid[n] != '_' {
		return "", false
	}
	if !isUUIDTime(uuid[len(prefix):n]) {
		return "", false
	}
	rest := uuid[n+1:]
	cut := strings.LastIndexByte(rest, '_')
	if cut <= 0 {
		return "", false
	}
	agent, suffix := rest[:cut], rest[cut+1:]
	if !ValidAgent(agent) || !(isSequence(suffix) || isHostSequence(suffix) || isDerivedSuffix(suffix) || isRandomized(suffix)) {
		return "", false
	}
	return agent, true
}

// isUUIDTime reports whether s has the shape UUIDTime writes,
// YYYYMMDDTHHMMSSZ with digits where digits go (checked without
// time.Parse: every line a pass reads goes through here).
func isUUIDTime(s string) bool {
	if len(s) != len(uuidTimeLayout) || s[8] != 'T' || s[15] != 'Z' {
		return false
	}
	for i := 0; i < 15; i++ {
		if i != 8 && (s[i] < '0' || s[i] > '9') {
			return false
		}
	}
	return true
}

// isSequence: four or more decimal digits.
func isSequence(s string) bool {
	if len(s) < 4 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isHostSequence: a host id, "-" and a sequence, as Append writes with
// AppendOptions.Host.
func isHostSequence(s string) bool {
	host, seq, ok := strings.Cut(s, "-")
	return ok && ValidHostID(host) && isSequence(seq)
}

// isRandomized: a sequence or a host sequence, "-" and a random part, as
// Append writes with AppendOptions.Random.
func isRandomized(s string) bool {
	cut := strings.LastIndexByte(s, '-')
	return cut > 0 && isRandomPart(s[cut+1:]) && (isSequence(s[:cut]) || isHostSequence(s[:cut]))
}

// isDerivedSuffix: "h" and 16 lowercase hex digits, as DerivedUUID writes.
func isDerivedSuffix(s string) bool {
	if len(s) != 17 || s[0] != 'h' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// CheckOwner reports why r, a valid record read from owner's journal, can
// never be projected from there: its agent field names another agent, or
// its uuid is one that names another agent (UUIDOwner). An agent writes
// only its own records, under its own uuids; without the second rule an
// agent could write another's predictable next uuids first and have that
// agent's appends rejected. memsync's own records (promotions, consolidation
// actions, their uuids) are valid only in the form and journal memsync
// writes them in (checkOwnRecord). The error is a *FieldError; nil when r
// may be projected.
func CheckOwner(r *Record, owner string) error {
	if r.Agent != owner {
		return fieldErr("agent", "%q cannot write in %s's journal", r.Agent, owner)
	}
	if named, ok := UUIDOwner(r.UUID); ok && named != owner {
		return fieldErr("uuid", "%s names agent %s, but the journal belongs to %s", r.UUID, named, owner)
	}
	if err := checkOwnRecord(r, owner); err != nil {
		return err
	}
	return nil
}

// Version is what ClashWins compares of a record: its scope, ts and hash
// (Record.Hash). Backends can read it from what they store without
// decoding the record.
type Version struct {
	Scope Scope
	TS    time.Time
	Hash  string
}

// VersionOf returns r's Version, given its hash (Record.Hash).
func VersionOf(r *Record, hash string) Version {
	return Version{Scope: r.Scope, TS: r.TS, Hash: hash}
}

// ClashWins reports whether a is the version a uuid stands for when a and
// b, two valid records with that uuid and different content, both claim
// it. It is a total order on distinct contents, independent of the order
// in which the lines are read, and it never widens who may read the
// record: a private version wins over a shared one; then the earlier ts;
// then the smaller hash. Equal hashes are the same content: neither wins.
func ClashWins(a, b Version) bool {
	if ap, bp := a.Scope != ScopeShared, b.Scope != ScopeShared; ap != bp {
		return ap
	}
	if !a.TS.Equal(b.TS) {
		return a.TS.Before(b.TS)
	}
	return a.Hash < b.Hash
}

// ClashReason is the reject reason of a line whose record lost its uuid to
// other content, the version at winnerPath:winnerLine when known ("" if not).
func ClashReason(uuid, winnerPath string, winnerLine int) string {
	at := ""
	if winnerPath != "" {
		at = fmt.Sprintf(" (%s:%d)", winnerPath, winnerLine)
	}
	return fmt.Sprintf("field %q: %s is held by different content that wins the uuid%s: private before shared, then earliest ts, then smallest hash",
		"uuid", uuid, at)
}
