package cmdline

import (
	"flag"
	"strings"
)

// Suggest is the candidate closest to name when one is close enough to be
// a slip of the keyboard ("serach" for search, "agnet" for agent,
// "critc" for critic), else "". Close is an edit distance (insertions,
// deletions, substitutions and swaps of two neighbours, each 1) of at most
// 1 for names of up to four characters and at most 2 for longer ones, and
// less than half the name. Of equally close candidates the first wins.
// When none is that close, a name of three or more characters that begins
// exactly one candidate ("crit" for critic) suggests that one.
func Suggest(name string, candidates []string) string {
	if s := suggestClose(name, candidates); s != "" {
		return s
	}
	if len([]rune(name)) < 3 {
		return ""
	}
	prefixed := ""
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), strings.ToLower(name)) {
			if prefixed != "" {
				return ""
			}
			prefixed = c
		}
	}
	return prefixed
}

// suggestClose is Suggest's edit-distance rule alone.
func suggestClose(name string, candidates []string) string {
	best, bestDist := "", 0
	n := len([]rune(name))
	limit := 2
	if n <= 4 {
		limit = 1
	}
	for _, c := range candidates {
		if c == name {
			return c
		}
		d := editDistance(strings.ToLower(name), strings.ToLower(c))
		if d > limit || 2*d >= n {
			continue
		}
		if best == "" || d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b: the
// Levenshtein distance with a swap of two neighbouring characters
// counting 1.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// d[i][j] is the distance of x[:i] and y[:j].
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// FlagNames is every flag of fs, by name.
func FlagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// CommandNames is the name of every command of Commands, in order.
func CommandNames() []string {
	var names []string
	for _, c := range Commands() {
		names = append(names, c.Name)
	}
	return names
}
