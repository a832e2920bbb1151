package manifests

import "context"

// flightKey is the singleflight key of a load: a hard load renders, so it
// never joins a load that may answer from the cache.
func flightKey(req Request, key string) string {
	if req.Hard {
		return "hard\x00" + key
	}
	return key
}

// flight runs load once for concurrent callers of one key, detached from
// any one caller so that a caller giving up does not fail the others.
func (l *Loader) flight(ctx context.Context, key string, load func(context.Context) (any, error)) (any, error) {
	ch := l.flights.DoChan(key, func() (any, error) {
		timeout := l.Timeout
		if timeout <= 0 {
			timeout = DefaultLoadTimeout
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		return load(fctx)
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		if loaded, ok := res.Val.(*Loaded); ok && res.Shared {
			return loaded.copy(), nil
		}
		return res.Val, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
