package srt

import "testing"

func TestStreamKey(t *testing.T) {
	key := "lsk0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		in   string
		want string
		err  error
	}{
		{key, key, nil},
		{"#!::r=" + key + ",m=publish", key, nil},
		{"#!::m=publish,u=obs,r=" + key, key, nil},
		{"#!::r=" + key, key, nil},
		{"%23!%3A%3Ar%3D" + key + "%2Cm%3Dpublish", key, nil},
		{"#!::r=" + key + ",m=request", "", errNotPublish},
		{"#!::m=publish", "", errBadStreamID},
		{"", "", errBadStreamID},
		{"live/" + key, "", errBadStreamID},
		{key + "\n", "", errBadStreamID},
		{"LSK0123456789ABCDEF0123456789ABCDEF", "", errBadStreamID},
	} {
		got, err := streamKey(tc.in)
		if got != tc.want || err != tc.err {
			t.Errorf("streamKey(%q) = %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}
