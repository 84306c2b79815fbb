package journal

import (
	"bytes"
	"encoding/json"
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

// FuzzDuplicateKey: duplicateKey agrees with its recursive oracle on every
// valid JSON value, and never panics on anything.
func FuzzDuplicateKey(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"a":2}`, `{"a":{"b":[1,{"c":1,"c":2}]}}`, `[{"a":1},{"a":1}]`, `{"a":"x","\u0061":"y"}`,
		`{}`, `[]`, `"s"`, `{"a":[[],[{}]],"b":{"a":1}}`, `{"a":1`, `{"a":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, gotOK := duplicateKey(b)
		if !json.Valid(b) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		want, wantOK := oldDuplicateKey(dec, "")
		if got != want || gotOK != wantOK {
			t.Fatalf("duplicateKey(%q) = %q %v, oracle %q %v", b, got, gotOK, want, wantOK)
		}
	})
}

// FuzzHighWater: a sequence file's content either parses to marks that
// encode back to the same marks, or is refused; never a panic.
func FuzzHighWater(f *testing.F) {
	for _, s := range []string{"20261121T091500Z 3\n", "20261121T091500Z 3\n20261121T091400Z 9\n", "", "garbage", "20261121T091500Z -1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		hw, ok := parseHighWater(b)
		if !ok {
			return
		}
		again, ok := parseHighWater(hw.encode())
		if !ok || again != hw {
			t.Fatalf("parseHighWater(%q) = %+v, which encodes to %q and parses to %+v %v", b, hw, hw.encode(), again, ok)
		}
	})
}
