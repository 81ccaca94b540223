package contacts_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/internal/servicetest"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services/contacts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The listings of contacts show what fits in ListBytes, and say how many the limit asked for.
func TestContactListingsAreCapped(t *testing.T) {
	ws := workspace.New(servicetest.Start, 0)
	var cs []*contacts.Contact
	for i := range 10 {
		cs = append(cs, &contacts.Contact{Name: fmt.Sprintf("Person %d", i), Team: "Ops", Source: contacts.Directory, Role: strings.Repeat("r", 100<<10)})
	}
	_, err := contacts.Add(ws, cs)
	require.NoError(t, err)
	for _, call := range []string{`{"team":"ops"}`, `{"query":"person"}`} {
		name := "contacts_list"
		if strings.Contains(call, "query") {
			name = "contacts_search"
		}
		got := servicetest.Object(t, servicetest.OK(t, ws, name, call))
		items, _ := got.Get("items")
		assert.Len(t, items, 2, name)
		assert.LessOrEqual(t, len(jsonv.MustEncode(items)), limits.ListBytes)
		total, _ := got.Get("total")
		assert.Equal(t, int64(10), total, name)
	}
	got := servicetest.OK(t, ws, "contacts_list", `{"team":"ops","limit":2}`)
	assert.True(t, strings.HasPrefix(got, `[{"id":`), "what fits is the list it always was")
}
