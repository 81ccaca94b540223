package generator

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A generate job carries the examples chosen for its attempt, and the worker chooses again among
// them alone: that must give them all back, in order, whatever the pool.
func TestChoosingAgainAmongTheChosen(t *testing.T) {
	caps := []string{"mail.reply", "files.extract"}
	for n := range 12 {
		var pool []example
		for i := range n {
			ex := example{path: fmt.Sprintf("tasks/t%d.star", i), src: strings.Repeat("x", 1000+4000*(i%5))}
			if i%3 != 0 {
				ex.caps = caps[i%2 : i%2+1]
			}
			pool = append(pool, ex)
		}
		for seed := range int64(20) {
			chosen := chooseExamples(pool, caps, seed)
			assert.Equal(t, chosen, chooseExamples(chosen, caps, seed), "pool of %d, seed %d", n, seed)
		}
	}
}

func TestShinglesPacked(t *testing.T) {
	sh := Shingles("the quick brown fox jumps over the lazy dog")
	got, err := unpackShingles(packShingles(sh))
	require.NoError(t, err)
	assert.Equal(t, sh, got)
	got, err = unpackShingles(packShingles(nil))
	require.NoError(t, err)
	assert.Nil(t, got)
	_, err = unpackShingles([]byte{1, 2, 3})
	assert.Error(t, err)
}

// A worker's answer cannot make the producer write outside its folder.
func TestAnswerNamesAFile(t *testing.T) {
	for _, name := range []string{"../escape", "a/b", "", ".hidden"} {
		data, err := json.Marshal(attemptAnswer{Record: Record{Attempt: 2, Status: "accepted", Task: name}})
		require.NoError(t, err)
		_, err = readAttemptAnswer(data, 2)
		assert.ErrorContains(t, err, "no file name", name)
	}
	data, err := json.Marshal(attemptAnswer{Record: Record{Attempt: 2, Status: "accepted", Task: "ok-name"}})
	require.NoError(t, err)
	o, err := readAttemptAnswer(data, 2)
	require.NoError(t, err)
	assert.Equal(t, "ok-name", o.rec.Task)
	_, err = readAttemptAnswer(data, 3)
	assert.ErrorContains(t, err, "answered for attempt 2")
}
