# Sourced by scripts/generate-man-pages: what swift-argument-parser's generate-manual plugin
# cannot say, taken from the tools themselves. The plugin writes every synopsis as
# `TOOL subcommand …` (it counts the `help` it adds to every tool as a subcommand, and it
# ignores CommandConfiguration's `usage`), lists that `help` even for tools that have none,
# and ends with the generic `.Ex -std`. So each page gets
#   - a SYNOPSIS made of the usage lines the built tool prints in --help (which honour
#     `usage:`), for a tool with verbs (lsctl) each verb's usage too, then --help and
#     --version;
#   - no `help` entry when the tool has no subcommands;
#   - an EXIT STATUS that lists the statuses its --help discussion gives ("Exit status: 0 …;
#     1 …."), which come from ExitCodes and DaemonExitStatus.

# usage_lines BIN WORD… : the USAGE lines of `BIN WORD… --help`, one per line.
usage_lines() {
  "$@" --help | awk '
    /^USAGE: / { sub(/^USAGE: /, ""); print; on = 1; next }
    on && /^       [^ ]/ { sub(/^ +/, ""); print; next }
    on { exit }'
}

# verbs BIN WORD… : the subcommands `BIN WORD… --help` lists, one per line (none for a tool
# without subcommands).
verbs() {
  "$@" --help | awk '
    /^SUBCOMMANDS:$/ { on = 1; next }
    on && /^$/ { exit }
    on && /^  [^ ]/ { print $1 }'
}

# usage_to_mdoc: ArgumentParser usage lines on stdin, mdoc SYNOPSIS lines on stdout. Each line
# starts with .Nm; a [ … ] group becomes .Op, <value> Ar, --flag Fl, a verb Cm.
usage_to_mdoc() {
  awk '
    function word(t) {
      if (t == "|" || t == "...") return t
      if (t ~ /^<.*>$/) return "Ar " substr(t, 2, length(t) - 2)
      if (t ~ /^-/) return "Fl " substr(t, 2)
      return "Cm " t
    }
    # The words of a group, nested groups as Oo … Oc.
    function group(text,   n, parts, i, t, out, opened, closed) {
      n = split(text, parts, " ")
      out = ""
      for (i = 1; i <= n; i++) {
        t = parts[i]
        opened = 0; closed = 0
        while (substr(t, 1, 1) == "[") { out = out " Oo"; t = substr(t, 2) }
        while (substr(t, length(t), 1) == "]") { closed++; t = substr(t, 1, length(t) - 1) }
        if (t != "") out = out " " word(t)
        while (closed-- > 0) out = out " Oc"
      }
      return substr(out, 2)
    }
    {
      line = $0; L = length(line); i = 1; first = 1
      while (i <= L) {
        c = substr(line, i, 1)
        if (c == " ") { i++; continue }
        if (c == "[") {
          depth = 0
          for (j = i; j <= L; j++) {
            d = substr(line, j, 1)
            if (d == "[") depth++
            if (d == "]" && --depth == 0) break
          }
          print ".Op " group(substr(line, i + 1, j - i - 1))
          i = j + 1
          continue
        }
        j = index(substr(line, i), " ")
        t = j ? substr(line, i, j - 1) : substr(line, i)
        i += length(t)
        if (first) { print ".Nm"; first = 0; continue }
        print "." word(t)
      }
    }'
}

# fix_man_page BIN_DIR TOOL PAGE: rewrites PAGE (the plugin's) in place.
fix_man_page() {
  local bin="$1" tool="$2" page="$3" synopsis statuses top verb sub nested
  top=$(verbs "$bin/$tool")
  synopsis=$( {
    usage_lines "$bin/$tool"
    for verb in $top; do
      [ "$verb" = help ] && continue
      nested=$(verbs "$bin/$tool" "$verb")
      if [ -z "$nested" ]; then usage_lines "$bin/$tool" "$verb"; continue; fi
      for sub in $nested; do [ "$sub" = help ] || usage_lines "$bin/$tool" "$verb" "$sub"; done
    done
    # Flags ArgumentParser gives every tool here, which no usage line shows.
    echo "$tool --help"
    echo "$tool --version"
  } | usage_to_mdoc)
  # "Exit status: 0 done; 1 …; 64 …." in the tool's discussion (the page's first), one per status.
  statuses=$(grep -m1 -o 'Exit status: .*' "$page" | sed -e 's/^Exit status: //' -e 's/\.$//' \
    | awk '{ n = split($0, parts, /; /); item = ""
             for (i = 1; i <= n; i++) {
               if (parts[i] ~ /^[0-9]+ /) { if (item != "") print item; item = parts[i] } else item = item "; " parts[i]
             }
             if (item != "") print item }' \
    | awk '{ status = $1; sub(/^[0-9]+ /, ""); print ".It " status; print }')
  [ -n "$synopsis" ] || die "$tool --help shows no USAGE line"
  [ -n "$statuses" ] || die "$page has no 'Exit status:' sentence to list under EXIT STATUS"
  SYNOPSIS="$synopsis" STATUSES="$statuses" HAS_VERBS="${top:+yes}" awk '
    BEGIN { synopsis = ENVIRON["SYNOPSIS"]; statuses = ENVIRON["STATUSES"]; verbs = ENVIRON["HAS_VERBS"] == "yes" }
    /^\.Sh SYNOPSIS$/ { print; print synopsis; skip = 1; next }
    skip && /^\.Sh / { skip = 0 }
    skip { next }
    # The help entry the plugin adds to a tool without subcommands: `.It Em help` and its list.
    !verbs && /^\.It Em help$/ { dropping = 1; depth = 0; next }
    dropping {
      if ($0 ~ /^\.Bl /) depth++
      if ($0 ~ /^\.El$/ && --depth == 0) dropping = 0
      next
    }
    /^\.Ex -std/ { print ".Bl -tag -width 6n"; print statuses; print ".El"; next }
    { print }' "$page" > "$page.fixed"
  mv "$page.fixed" "$page"
}
