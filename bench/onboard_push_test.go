package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPushProbeFigureIsBesideTheIdleStack(t *testing.T) {
	p := &pushProbe{w: &Worker{Webhook: true}, idle: []float64{0.4, 0.5, 0.6}}
	p.pushDuring(t.Context(), 9, 100) // not a tenth yet
	assert.Nil(t, p.busy)

	p.busy = make(chan probeResult, 1)
	p.busy <- probeResult{took: 0.75}
	f := p.figure(100, "")
	assert.Equal(t, []float64{0.75}, f.Samples)
	assert.Contains(t, f.What, "1.50×")
	assert.Contains(t, f.What, "webhook")

	never := (&pushProbe{w: &Worker{}, idle: []float64{0.5}}).figure(100, "")
	assert.Empty(t, never.Samples)
	assert.Contains(t, never.What, "Not measured: a tenth of the fleet was never Synced")
}
