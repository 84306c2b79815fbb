package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// maxInjectRunes caps what a hook injects into a session: Claude Code
// drops additionalContext beyond 10,000 characters.
const maxInjectRunes = 9500

// maxItemRunes cuts one memory's text in injected context.
const maxItemRunes = 400

// contextCaps bound the sections of a session's starting context.
const (
	maxFollowUps = 10
	maxRecent    = 10
)

// sessionContext is what agent starts session with: its core tier
// (`tier: core` records, never left out while they fit), its open
// follow-ups (tasks nothing superseded), then its most recent memories,
// newest first, in at most maxInjectRunes characters. It reads only
// agent's own journals, so it holds nothing but CONSTELLATION and
// AGENT:<agent> memories, and needs no graph.
//
// This is the one place that decides what a session starts with: when
// planner packets (SPEC §8) exist, a packet for the session replaces its
// body, and both the hooks and the MCP server follow.
func sessionContext(ctx context.Context, layout memsync.Layout, agent, session string) (string, error) {
	var core, tasks, recent []memsync.Memory
	retired := map[string]bool{}
	err := memsync.EachRecord(layout, agent, func(m memsync.Memory) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, u := range m.Supersedes {
			retired[u] = true
		}
		switch {
		case m.Tier == "core":
			core = append(core, m)
		case m.Kind == journal.KindTask:
			tasks = append(tasks, m)
		default:
			// Keep a window of the newest; files come in date order.
			if len(recent) >= 4*maxRecent {
				recent = slices.Delete(recent, 0, 2*maxRecent)
			}
			recent = append(recent, m)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("read %s's journals: %w", agent, err)
	}
	live := func(ms []memsync.Memory, n int) []memsync.Memory {
		ms = slices.DeleteFunc(ms, func(m memsync.Memory) bool { return retired[m.UUID] })
		slices.SortStableFunc(ms, func(a, b memsync.Memory) int { return b.TS.Compare(a.TS) })
		if n > 0 && len(ms) > n {
			ms = ms[:n]
		}
		return ms
	}
	core, tasks, recent = live(core, 0), live(tasks, maxFollowUps), live(recent, maxRecent)

	var b contextBuilder
	b.limit = maxInjectRunes
	b.line(fmt.Sprintf("# memsync: the memory of agent %s", agent))
	b.line(rememberHint(agent, session))
	b.section("Core (always true for you)", core)
	b.section("Open follow-ups", tasks)
	b.section("Recent", recent)
	return b.String(), nil
}

// rememberHint says how the agent journals what is worth keeping.
func rememberHint(agent, session string) string {
	s := ""
	if session != "" {
		s = " --session " + shellQuote(session)
	}
	return fmt.Sprintf("Journal what is worth keeping (decisions with why, preferences, procedures, outcomes, corrections) with "+
		"`memsync append --agent %s%s --kind K [--scope shared] [--why W] \"TEXT\"` or the MCP tool remember.", agent, s)
}

// contextBuilder writes lines while they fit in limit runes; a section
// whose items do not all fit says how many were left out.
type contextBuilder struct {
	strings.Builder
	limit, used int
}

func (b *contextBuilder) line(s string) bool {
	n := utf8.RuneCountInString(s) + 1
	if b.used+n > b.limit {
		return false
	}
	b.WriteString(s)
	b.WriteByte('\n')
	b.used += n
	return true
}

func (b *contextBuilder) section(title string, ms []memsync.Memory) {
	if len(ms) == 0 {
		return
	}
	if !b.line("\n## " + title) {
		return
	}
	for i, m := range ms {
		if !b.line(memoryLine(m)) {
			b.line(fmt.Sprintf("- (%d more left out for space)", len(ms)-i))
			return
		}
	}
}

// memoryLine is one memory in injected context.
func memoryLine(m memsync.Memory) string {
	text := strings.Join(strings.Fields(m.Text), " ")
	if utf8.RuneCountInString(text) > maxItemRunes {
		r := []rune(text)
		text = string(r[:maxItemRunes]) + "…"
	}
	scope := ""
	if m.Scope == journal.ScopeShared {
		scope = " shared"
	}
	line := fmt.Sprintf("- [%s%s %s] %s (%s)", m.Kind, scope, m.TS.UTC().Format(time.DateOnly), text, m.UUID)
	if m.Why != "" {
		line += " — why: " + strings.Join(strings.Fields(m.Why), " ")
	}
	return line
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == ':' || r == '@' || r == '=' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
