package journal

import "time"

// SPEC §7, "References cross no privacy line": this file is the one place
// that says which memories a record's references may touch. Every reader
// that turns references into importance (score.Evaluate) and every path
// that retires superseded memories (both graph backends, the offline path)
// asks these functions; none keeps its own copy. ReaderGroups is the same
// rule as the list of groups a reader's query names; RetiresFirst says
// which of the records that retire a memory is the one it names.

// ReaderGroups lists the groups agent reads, in the order a query names
// them: the shared group, then agent's own private one. Exactly the groups
// for which Sees(agent, group) holds; every search, list, packet and view
// made for one reader asks with these.
func ReaderGroups(agent string) []string {
	return []string{SharedGroup, PrivateGroup(agent)}
}

// Sees reports whether a record written by agent sees a memory of group:
// shared memories and agent's own private ones. A record's links,
// supports, conflicts_with, an outcome's links and a feedback record's
// target take effect only on memories their writer sees; toward any other
// they change nothing.
func Sees(agent, group string) bool {
	return group == SharedGroup || group == PrivateGroup(agent)
}

// Retires reports whether a record written by agent in group srcGroup that
// supersedes a memory of group dstGroup retires it: its writer sees the
// memory, and a private record retires only memories of its own group (a
// shared record retires shared memories and its writer's private ones).
// So a private record never hides a shared memory from the agents that
// cannot see the replacement, and no agent retires another's private memory.
func Retires(agent, srcGroup, dstGroup string) bool {
	if !Sees(agent, dstGroup) {
		return false
	}
	return srcGroup == SharedGroup || srcGroup == dstGroup
}

// RetiresFirst reports whether a superseder stamped ts with uuid retires a
// memory ahead of the record (at, by) that retires it so far (by "" for
// none): of the records that retire a memory (Retires), the earliest ts
// wins, the smallest uuid on a tie, whatever order they arrive in. Its
// invalid_at and replaced_by are that record's ts and uuid (SPEC §4).
// Every store that keeps them in Go asks this; the embedded store's SQL
// orders its superseders the same way (ORDER BY ts, uuid).
func RetiresFirst(ts time.Time, uuid string, at time.Time, by string) bool {
	return by == "" || ts.Before(at) || ts.Equal(at) && uuid < by
}
