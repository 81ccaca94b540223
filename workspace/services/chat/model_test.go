package chat_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services"
	"github.com/coworkenv/coworkenv/workspace/services/chat"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDigestCoversEveryField changes each exported field of an entry in turn: the digest must
// change with it.
func TestDigestCoversEveryField(t *testing.T) {
	for _, e := range []workspace.Entry{
		&chat.Message{ID: "cm1", Conv: "#a", Sender: "x", Text: "t", TS: "2026-01-05T09:00:00Z", Thread: "cm0",
			Mentions: []string{"y"}, Reactions: []chat.Reaction{{Emoji: "eyes", People: []string{"y"}}}},
		&chat.Channel{Name: "#a", Topic: "t", Members: []string{"x"}},
	} {
		base := e.Digest()
		v := reflect.ValueOf(e).Elem()
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if !f.CanSet() {
				continue
			}
			old := reflect.ValueOf(f.Interface())
			switch f.Kind() {
			case reflect.String:
				f.SetString(f.String() + "!")
			case reflect.Bool:
				f.SetBool(!f.Bool())
			case reflect.Slice:
				if f.Type().Elem().Kind() == reflect.String {
					f.Set(reflect.ValueOf(append(f.Interface().([]string), "z")))
				} else {
					r := f.Interface().([]chat.Reaction)
					f.Set(reflect.ValueOf([]chat.Reaction{{Emoji: r[0].Emoji, People: []string{"z"}}}))
				}
			default:
				t.Fatalf("field %s of %T: kind %s not covered by this test", v.Type().Field(i).Name, e, f.Kind())
			}
			assert.NotEqual(t, base, e.Digest(), "%T.%s is not in the digest", e, v.Type().Field(i).Name)
			f.Set(old)
			require.Equal(t, base, e.Digest())
		}
	}
}

func TestToolsAreTheChatGroup(t *testing.T) {
	group := services.Group("chat")
	require.NotEmpty(t, group)
	for _, tl := range group {
		assert.True(t, strings.HasPrefix(tl.Name, "chat_"), tl.Name)
		assert.Equal(t, "chat", tl.Group)
		assert.NotEmpty(t, tl.Description)
		_, err := jsonv.Encode(tl.Schema())
		require.NoError(t, err)
	}
}

func TestForksAndSetupText(t *testing.T) {
	base := workspace.New(start, 1)
	require.NoError(t, chat.Service.Probe(base))
	assert.Equal(t, "chat handle me\nchat channel #probe members probe\nprobe\nchat cm1 #probe 2026-01-05T09:00:00Z probe\nx\n", chat.Service.Setup(base))
	assert.Equal(t, "", chat.Service.Setup(workspace.New(start, 1)))
	base.Freeze()

	// the same posts in two forks give the same state; the base is untouched
	post := func() *workspace.State {
		st := base.Fork()
		tl, _ := services.Tool("chat_post")
		_, err := tl.Call(st, jsonv.NewObject("channel", "#probe", "text", "hello @probe", "thread", "cm1"))
		require.NoError(t, err)
		return st
	}
	a, b := post(), post()
	assert.Equal(t, a.Hash(), b.Hash())
	assert.NotEqual(t, base.Hash(), a.Hash())
	assert.Equal(t, workspace.Section{Added: []string{"cm2"}, Changed: []string{}, Removed: []string{}}, workspace.Diff(base, a).Part(chat.Part))
	assert.Equal(t, 2, base.PartLen(chat.Part), "the base keeps its channel and message")
	assert.Equal(t, []string{"#probe", "cm1", "cm2"}, a.PartKeys(chat.Part))
	assert.Contains(t, chat.Service.Setup(a), "chat cm2 #probe 2026-01-05T09:00:00Z me in thread cm1\nhello @probe\n")
}

func TestValueIsNilForOtherEntries(t *testing.T) {
	assert.Nil(t, chat.Service.Value(other{}))
	assert.NotNil(t, chat.Service.Value(&chat.Channel{Name: "#a"}))
}

type other struct{}

func (other) Digest() [32]byte { return workspace.Digest("other") }
