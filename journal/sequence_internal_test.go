package journal

import (
	"math/rand"
	"regexp"
	"strconv"
	"testing"
)

// TestHighestSequence checks the substring scan against the regular
// expression it replaces, on hand-picked and random inputs.
func TestHighestSequence(t *testing.T) {
	const prefix = "mem_20261121T091500Z_alice_"
	re := regexp.MustCompile(`"uuid"\s*:\s*"` + regexp.QuoteMeta(prefix) + `([0-9]{4,9})"`)
	oracle := func(buf []byte) int {
		best := 0
		for _, m := range re.FindAllSubmatch(buf, -1) {
			if n, _ := strconv.Atoi(string(m[1])); n > best {
				best = n
			}
		}
		return best
	}
	inputs := []string{
		``,
		`{"uuid":"mem_20261121T091500Z_alice_0007","ts":"x"}`,
		`{ "uuid" :	"mem_20261121T091500Z_alice_0012" }`,
		`{"links":["mem_20261121T091500Z_alice_0099"],"uuid":"mem_20261121T091500Z_alice_0003"}`,
		`{"uuid":"mem_20261121T091500Z_alice_123"}`,
		`{"uuid":"mem_20261121T091500Z_alice_1234567890"}`,
		`{"uuid":"mem_20261121T091500Z_alice_123456789"}`,
		`{"xuuid":"mem_20261121T091500Z_alice_0050"}`,
		`{"uuid":"mem_20261121T091500Z_alice_0050x"}`,
		`{"uuid":"mem_20261121T091500Z_alice_0001"}` + "\n" + `{"uuid":"mem_20261121T091500Z_alice_0002"}`,
	}
	pieces := []string{`"uuid"`, `:`, ` `, `"`, prefix, "0", "7", "12345", `,`, `{`, `}`, "\n", "x", `uuid`}
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 20000; i++ {
		s := ""
		for k := rng.Intn(12); k > 0; k-- {
			s += pieces[rng.Intn(len(pieces))]
		}
		inputs = append(inputs, s)
	}
	for _, in := range inputs {
		if got, want := highestSequence([]byte(in), prefix), oracle([]byte(in)); got != want {
			t.Fatalf("highestSequence(%q) = %d, want %d", in, got, want)
		}
	}
}
