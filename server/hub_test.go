package main

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// fleet is the hub's Temporal in these tests: each app's search
// attributes and the view its query answers.
type fleet struct {
	mu      sync.Mutex
	sums    map[string]contract.Summary
	msgs    map[string]string // the view's status message: what moves no attribute
	failing map[string]bool
	hold    map[string]chan struct{} // a query that answers when closed
	asked   []string
}

func (f *fleet) set(name, health, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sums[name] = contract.Summary{Sync: "Synced", Health: health, Project: "default"}
	f.msgs[name] = msg
}

func (f *fleet) list(_ context.Context, fn func(string, contract.Summary)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for name, sum := range f.sums {
		fn(name, sum)
	}
	return nil
}

func (f *fleet) query(ctx context.Context, name string) (*contract.View, error) {
	f.mu.Lock()
	f.asked = append(f.asked, name)
	hold := f.hold[name]
	f.mu.Unlock()
	if hold != nil {
		<-hold
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failing[name] {
		return nil, errors.New("the workflow does not answer")
	}
	if _, ok := f.sums[name]; !ok {
		return nil, &contract.AppNotFoundError{Name: name}
	}
	v := &contract.View{}
	v.Metadata.Name, v.Spec.Project = name, "default"
	v.Status.Health.Status = app.HealthStatusCode(f.sums[name].Health)
	v.Status.Sync.Status = app.SyncStatusCode(f.msgs[name])
	return v, nil
}

func (f *fleet) takeAsked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.asked
	f.asked = nil
	slices.Sort(a)
	return a
}

type hubTest struct {
	t     *testing.T
	f     *fleet
	h     *hub
	run   int
	sem   chan struct{}
	clock time.Time
	sent  map[string]uint64
}

func newHubTest(t *testing.T) *hubTest {
	ht := &hubTest{t: t, f: &fleet{sums: map[string]contract.Summary{}, msgs: map[string]string{}, failing: map[string]bool{}, hold: map[string]chan struct{}{}},
		sem: make(chan struct{}, hubQueries), clock: time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC), sent: map[string]uint64{}}
	ht.h = &hub{log: slog.New(slog.DiscardHandler), list: ht.f.list, query: ht.f.query, cache: &viewCache{}, now: func() time.Time { return ht.clock }}
	ht.run = ht.h.reset()
	return ht
}

// round runs a round and waits for its answers.
func (ht *hubTest) round(first bool) {
	answered, err := ht.h.round(context.Background(), ht.run, ht.sem, first)
	require.NoError(ht.t, err)
	answered.Wait()
}

// changed is what a stream sends now: the apps changed since it last
// sent, and those gone.
func (ht *hubTest) changed() (names, gone []string) {
	changed, gone := ht.h.since(ht.sent)
	for _, e := range changed {
		ht.sent[e.name] = e.seq
		names = append(names, e.name+" "+string(e.view.Status.Health.Status)+" "+string(e.view.Status.Sync.Status))
	}
	for _, name := range gone {
		delete(ht.sent, name)
	}
	return names, gone
}

func TestHubSendsEachChangeOnceAndTheLatest(t *testing.T) {
	ht := newHubTest(t)
	ht.f.set("a", "Healthy", "one")
	ht.f.set("b", "Healthy", "one")
	ht.round(true)
	names, _ := ht.changed()
	assert.ElementsMatch(t, []string{"a Healthy one", "b Healthy one"}, names, "a stream first sends every app")
	ht.f.takeAsked()

	ht.round(false)
	names, _ = ht.changed()
	assert.Empty(t, names, "nothing moved")
	assert.Empty(t, ht.f.takeAsked(), "an app whose attributes did not move is not asked")

	ht.f.set("b", "Progressing", "two")
	ht.round(false)
	ht.f.set("b", "Degraded", "three")
	ht.round(false)
	names, _ = ht.changed()
	assert.Equal(t, []string{"b Degraded three"}, names, "two changes before the stream wrote: the latest, once")
}

func TestHubFirstRoundTakesCurrentCachedViews(t *testing.T) {
	ht := newHubTest(t)
	ht.f.set("a", "Healthy", "one")
	ht.f.set("b", "Healthy", "one")
	v, _ := ht.f.query(context.Background(), "a")
	ht.h.cache.put("a", ht.f.sums["a"], v, time.Now())
	ht.f.takeAsked()
	ht.round(true)
	assert.Equal(t, []string{"b"}, ht.f.takeAsked(), "a list just queried a")
	names, _ := ht.changed()
	assert.Len(t, names, 2)
}

func TestHubFollowsWhatMovesNoAttribute(t *testing.T) {
	ht := newHubTest(t)
	ht.f.set("a", "Healthy", "synced once")
	ht.round(true)
	ht.changed()

	ht.f.set("a", "Healthy", "synced twice") // a second sync that ends as the first
	ht.round(false)
	names, _ := ht.changed()
	assert.Empty(t, names, "no attribute moved, and nobody said a changed")

	ht.h.follow("a") // nobody watches: not followed
	ht.h.subs = map[chan struct{}]bool{make(chan struct{}, 1): true}
	ht.round(false)
	names, _ = ht.changed()
	assert.Empty(t, names)
	ht.h.follow("a") // the server synced it
	ht.round(false)
	names, _ = ht.changed()
	assert.Equal(t, []string{"a Healthy synced twice"}, names)

	ht.clock = ht.clock.Add(followFor + time.Second)
	ht.f.takeAsked()
	ht.round(false)
	assert.Empty(t, ht.f.takeAsked(), "followed for a while only")

	sum := ht.f.sums["a"]
	sum.Operation = string(app.OperationRunning)
	ht.f.sums["a"] = sum
	ht.round(false)
	ht.f.set("a", "Healthy", "wave 2")
	ht.f.sums["a"] = sum
	ht.round(false)
	names, _ = ht.changed()
	assert.Equal(t, []string{"a Healthy wave 2"}, names, "an operation's progress is followed while it runs")
}

func TestHubAsksAnAppThatDidNotAnswerAgain(t *testing.T) {
	ht := newHubTest(t)
	ht.f.set("a", "Healthy", "one")
	ht.round(true)
	ht.changed()

	ht.f.set("a", "Degraded", "two")
	ht.f.failing["a"] = true
	ht.f.takeAsked()
	ht.round(false)
	names, _ := ht.changed()
	assert.Empty(t, names)
	ht.f.failing["a"] = false
	ht.round(false)
	assert.Equal(t, []string{"a"}, ht.f.takeAsked(), "asked again only after failedBackoff")

	ht.clock = ht.clock.Add(failedBackoff)
	ht.round(false)
	names, _ = ht.changed()
	assert.Equal(t, []string{"a Degraded two"}, names, "the change is not lost")
}

func TestHubSlowAppDelaysNoOther(t *testing.T) {
	ht := newHubTest(t)
	ht.f.set("slow", "Healthy", "one")
	ht.f.set("b", "Healthy", "one")
	ht.round(true)
	ht.changed()

	hold := make(chan struct{})
	ht.f.hold["slow"] = hold
	ht.f.set("slow", "Degraded", "two")
	ht.f.set("b", "Degraded", "two")
	slowAnswered, err := ht.h.round(context.Background(), ht.run, ht.sem, false)
	require.NoError(t, err)
	names, _ := ht.changed()
	for ; len(names) == 0; names, _ = ht.changed() {
		time.Sleep(time.Millisecond) // b's answer comes while slow's is held
	}
	assert.Equal(t, []string{"b Degraded two"}, names)
	ht.f.takeAsked()
	ht.round(false)
	assert.NotContains(t, ht.f.takeAsked(), "slow", "an app asked already is not asked again before it answered")
	close(hold)
	slowAnswered.Wait()
	names, _ = ht.changed()
	assert.Equal(t, []string{"slow Degraded two"}, names)
}

func TestHubSaysWhichAppsAreGone(t *testing.T) {
	ht := newHubTest(t)
	ht.f.set("a", "Healthy", "one")
	ht.f.set("b", "Healthy", "one")
	ht.round(true)
	ht.changed()
	delete(ht.f.sums, "a")
	ht.round(false)
	names, gone := ht.changed()
	assert.Empty(t, names)
	assert.Equal(t, []string{"a"}, gone)
}

// TestHubStartsAgainAfterItsLastWatcher: the hub runs while someone
// watches; a watcher that comes after the last one left gets every app
// again, and a change reaches it.
func TestHubStartsAgainAfterItsLastWatcher(t *testing.T) {
	ht := newHubTest(t)
	ht.h.now = time.Now
	ht.f.set("a", "Healthy", "one")
	for range 2 {
		wake, stop := ht.h.subscribe()
		require.NoError(t, ht.h.wait(context.Background()))
		ht.sent = map[string]uint64{}
		names, _ := ht.changed()
		assert.Equal(t, []string{"a Healthy one"}, names, "a new watcher gets every app")
		ht.f.set("a", "Degraded", "two")
		for names = nil; names == nil; names, _ = ht.changed() {
			<-wake // as a stream: woken, it reads what changed
		}
		assert.Equal(t, []string{"a Degraded two"}, names)
		ht.f.set("a", "Healthy", "one")
		stop()
	}
}

// TestHubFirstRoundWaitsForNoBusyWorkflow: a stream's first events are
// what answered within listWait; an app whose workflow is busy follows
// when it answers.
func TestHubFirstRoundWaitsForNoBusyWorkflow(t *testing.T) {
	ht := newHubTest(t)
	ht.f.set("busy", "Healthy", "one")
	ht.f.set("b", "Healthy", "one")
	hold := make(chan struct{})
	ht.f.hold["busy"] = hold
	answered, err := ht.h.round(context.Background(), ht.run, ht.sem, true)
	require.NoError(t, err, "the first round ends although busy does not answer")
	names, _ := ht.changed()
	assert.Equal(t, []string{"b Healthy one"}, names)
	close(hold)
	answered.Wait()
	names, _ = ht.changed()
	assert.Equal(t, []string{"busy Healthy one"}, names, "busy follows")
}

// TestHubSettlesOnEveryListedApp: a stream's first apps are all there are
// (settled) only once each listed app has a view; one whose first query
// fails is shown as its search attributes say, and its own view follows.
func TestHubSettlesOnEveryListedApp(t *testing.T) {
	ht := newHubTest(t)
	ht.f.set("a", "Healthy", "one")
	ht.f.set("busy", "Degraded", "two")
	ht.f.failing["busy"] = true
	hold := make(chan struct{})
	ht.f.hold["busy"] = hold
	answered, err := ht.h.round(context.Background(), ht.run, ht.sem, false)
	require.NoError(t, err)
	for names, _ := ht.changed(); len(names) == 0; names, _ = ht.changed() {
		time.Sleep(time.Millisecond) // a answers while busy's query is held
	}
	assert.False(t, ht.h.settled(), "busy has not answered yet")
	close(hold)
	answered.Wait()
	assert.True(t, ht.h.settled(), "busy's query failed: it stands in as listed")
	names, _ := ht.changed()
	assert.Equal(t, []string{"busy Degraded Synced"}, names, "busy as its search attributes say")

	ht.f.failing["busy"] = false
	delete(ht.f.hold, "busy")
	ht.clock = ht.clock.Add(failedBackoff)
	ht.round(false)
	names, _ = ht.changed()
	assert.Equal(t, []string{"busy Degraded two"}, names, "then its own view")

	delete(ht.f.sums, "a")
	ht.f.set("deleted", "Healthy", "one")
	ht.round(false)
	assert.True(t, ht.h.settled())
}
