package customize

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// scriptTimeout bounds one run of a script, as Argo CD bounds its own.
const scriptTimeout = time.Second

// safeOS is the part of Lua's os library a script may call: clocks and
// dates, nothing that reaches files, processes or the environment.
var safeOS = []string{"clock", "date", "difftime", "time"}

// compile parses a script once, when the ConfigMap is read, so that a
// syntax error is named at start rather than on the first object.
func compile(key, source string, fail func(string, string, ...any)) *lua.FunctionProto {
	chunk, err := parse.Parse(strings.NewReader(source), key)
	if err != nil {
		fail(key, "Lua syntax: %v", err)
		return nil
	}
	proto, err := lua.Compile(chunk, key)
	if err != nil {
		fail(key, "Lua: %v", err)
		return nil
	}
	return proto
}

// run calls script in a fresh interpreter with globals set, and returns
// what the script returns.
func run(script *lua.FunctionProto, globals map[string]any) (lua.LValue, error) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 256, RegistryMaxSize: 1 << 20})
	defer L.Close()
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	defer cancel()
	L.SetContext(ctx)
	openSafeLibs(L)
	for name, v := range globals {
		L.SetGlobal(name, toLua(L, v))
	}
	L.Push(L.NewFunctionFromProto(script))
	if err := L.PCall(0, 1, nil); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("ran longer than %s", scriptTimeout)
		}
		var apiErr *lua.ApiError
		if errors.As(err, &apiErr) {
			return nil, fmt.Errorf("%s", firstLine(apiErr.Object.String()))
		}
		return nil, err
	}
	return L.Get(-1), nil
}

func openSafeLibs(L *lua.LState) {
	for _, open := range []lua.LGFunction{lua.OpenBase, lua.OpenTable, lua.OpenString, lua.OpenMath, lua.OpenOs} {
		L.Push(L.NewFunction(open))
		L.Call(0, 0)
	}
	for _, name := range []string{"dofile", "loadfile", "print", "require", "module"} {
		L.SetGlobal(name, lua.LNil)
	}
	full, _ := L.GetGlobal(lua.OsLibName).(*lua.LTable)
	safe := L.NewTable()
	for _, name := range safeOS {
		if full != nil {
			safe.RawSetString(name, full.RawGetString(name))
		}
	}
	L.SetGlobal(lua.OsLibName, safe)
}

// toLua converts a JSON-shaped Go value (maps, slices, strings, numbers,
// bools, nil) to Lua.
func toLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case map[string]any:
		t := L.CreateTable(0, len(v))
		for k, e := range v {
			t.RawSetString(k, toLua(L, e))
		}
		return t
	case []any:
		t := L.CreateTable(len(v), 0)
		for _, e := range v {
			t.Append(toLua(L, e))
		}
		return t
	case []map[string]any:
		t := L.CreateTable(len(v), 0)
		for _, e := range v {
			t.Append(toLua(L, e))
		}
		return t
	default:
		return lua.LString(fmt.Sprint(v))
	}
}

// fromLua converts a Lua value back to JSON-shaped Go. like is the value
// the same place held before the script ran: Lua has one table type, so an
// empty table becomes a list where a list was, else an object.
func fromLua(v lua.LValue, like any) any {
	switch v := v.(type) {
	case *lua.LNilType:
		return nil
	case lua.LBool:
		return bool(v)
	case lua.LString:
		return string(v)
	case lua.LNumber:
		f := float64(v)
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f)
		}
		return f
	case *lua.LTable:
		return tableFromLua(v, like)
	default:
		return v.String()
	}
}

func tableFromLua(t *lua.LTable, like any) any {
	n := t.MaxN()
	count := 0
	t.ForEach(func(lua.LValue, lua.LValue) { count++ })
	_, wasList := like.([]any)
	if count == 0 && wasList || n > 0 && n == count {
		oldList, _ := like.([]any)
		out := make([]any, 0, n)
		for i := 1; i <= n; i++ {
			var was any
			if i <= len(oldList) {
				was = oldList[i-1]
			}
			out = append(out, fromLua(t.RawGetInt(i), was))
		}
		return out
	}
	oldMap, _ := like.(map[string]any)
	out := make(map[string]any, count)
	t.ForEach(func(k, e lua.LValue) {
		key := k.String()
		out[key] = fromLua(e, oldMap[key])
	})
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
