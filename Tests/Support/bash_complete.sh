#!/usr/bin/env bash
# Completes a command line the way bash does on <TAB>, with galley's generated completion script,
# and prints the candidates one per line.
# usage: bash_complete.sh SCRIPT 'galley issue show --store S '   (a trailing space: a new word)
source "$1"
line="$2"
read -ra COMP_WORDS <<< "$line"
[[ "$line" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="$line"
COMP_POINT=${#line}
cur="${COMP_WORDS[COMP_CWORD]}"
prev="${COMP_WORDS[COMP_CWORD-1]}"
_galley galley "$cur" "$prev"
printf '%s\n' "${COMPREPLY[@]}"
