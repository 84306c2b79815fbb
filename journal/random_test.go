package journal_test

import (
	"bytes"
	"crypto/rand"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

// TestAppendUUIDsNotGuessable is issue 25 §2's second bullet: every agent
// of a clone shares one host id and the sequence counts up, so an agent
// could name another's uuids it never saw. With AppendOptions.Random (as
// memsync append sets it) two appends in the same second, by two agents or
// by one, share no random part: knowing one uuid tells nothing of the
// next. The sequence still makes each unique and UUIDOwner still names
// the writer.
func TestAppendUUIDsNotGuessable(t *testing.T) {
	ts := time.Date(2026, 11, 21, 10, 15, 0, 0, time.UTC)
	repo := t.TempDir()
	form := regexp.MustCompile(`^mem_20261121T101500Z_([a-z]+)_host1-(\d{4})-([a-z2-7]{8})$`)
	randoms := map[string]string{}
	for _, tc := range []struct {
		agent, seq string
	}{{"a", "0001"}, {"b", "0001"}, {"a", "0002"}, {"a", "0003"}, {"b", "0002"}} {
		rec := journal.Record{TS: ts, Agent: tc.agent, Kind: journal.KindFact, Text: "same second"}
		opts := journal.AppendOptions{NoSync: true, Host: "host1", Random: rand.Reader,
			SequenceFile: filepath.Join(repo, ".memsync", "sequence", tc.agent)}
		if _, err := journal.Append(filepath.Join(repo, tc.agent), &rec, opts); err != nil {
			t.Fatal(err)
		}
		m := form.FindStringSubmatch(rec.UUID)
		if m == nil || m[1] != tc.agent || m[2] != tc.seq {
			t.Fatalf("uuid %s, want agent %s, sequence %s and a random part", rec.UUID, tc.agent, tc.seq)
		}
		if prev, dup := randoms[m[3]]; dup {
			t.Fatalf("%s repeats the random part of %s", rec.UUID, prev)
		}
		randoms[m[3]] = rec.UUID
		if agent, ok := journal.UUIDOwner(rec.UUID); !ok || agent != tc.agent {
			t.Fatalf("UUIDOwner(%s) = %q, %v", rec.UUID, agent, ok)
		}
	}
}

// TestAppendSequenceReadsRandomizedUUIDs: the sequence is found in lines
// whose uuids carry a random part, whichever way Append finds it (the
// high-water file, the tail, the whole day when there is no high-water
// file), and with or without a random part on the next uuid: no number
// is handed out twice.
func TestAppendSequenceReadsRandomizedUUIDs(t *testing.T) {
	ts := time.Date(2026, 11, 21, 10, 15, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		seqFile   bool
		randoms   []bool // which appends carry a random part
		wantUUIDs []string
	}{
		{"high-water file", true, []bool{true, true, false},
			[]string{"mem_20261121T101500Z_a_0001-aaaaaaaa", "mem_20261121T101500Z_a_0002-aaaaaaaa", "mem_20261121T101500Z_a_0003"}},
		{"scan of the day", false, []bool{true, true, false, true},
			[]string{"mem_20261121T101500Z_a_0001-aaaaaaaa", "mem_20261121T101500Z_a_0002-aaaaaaaa", "mem_20261121T101500Z_a_0003", "mem_20261121T101500Z_a_0004-aaaaaaaa"}},
		{"given ts, whole scan", true, []bool{true, false, true},
			[]string{"mem_20261121T101500Z_a_0001-aaaaaaaa", "mem_20261121T101500Z_a_0002", "mem_20261121T101500Z_a_0003-aaaaaaaa"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var got []string
			for i, random := range tc.randoms {
				rec := journal.Record{Agent: "a", Kind: journal.KindFact, Text: "x"}
				opts := journal.AppendOptions{NoSync: true, Now: func() time.Time { return ts }}
				if tc.name == "given ts, whole scan" {
					rec.TS, opts.Now = ts, nil
				}
				if tc.seqFile {
					opts.SequenceFile = filepath.Join(dir, "seq")
				}
				if random {
					// Zero bytes: a random part of "a"s, so the uuid is known.
					opts.Random = bytes.NewReader(make([]byte, 5))
				}
				if _, err := journal.Append(filepath.Join(dir, "journal"), &rec, opts); err != nil {
					t.Fatalf("append %d: %v", i, err)
				}
				got = append(got, rec.UUID)
			}
			if strings.Join(got, " ") != strings.Join(tc.wantUUIDs, " ") {
				t.Fatalf("uuids %v, want %v", got, tc.wantUUIDs)
			}
		})
	}
}

// TestAppendRandomFailure: a random source that fails writes nothing.
func TestAppendRandomFailure(t *testing.T) {
	dir := t.TempDir()
	rec := journal.Record{Agent: "a", Kind: journal.KindFact, Text: "x"}
	if _, err := journal.Append(dir, &rec, journal.AppendOptions{NoSync: true, Random: bytes.NewReader(nil)}); err == nil {
		t.Fatal("append with an empty random source succeeded")
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl")); len(files) != 0 {
		t.Fatalf("append created %v", files)
	}
}
