#!/usr/bin/env bash
# Regenerates the media of Examples/winter-2026 with ffmpeg (Debian's `ffmpeg` package).
# The files are committed, so nothing needs this script to build or test Galley; it is here so
# that the example's media can be reproduced and changed. Every file is real and decodable.
set -euo pipefail
cd "$(dirname "$0")/../winter-2026"
ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }

# Issue images: cover (JPEG) and masthead (PNG).
ff -f lavfi -i "mandelbrot=s=600x800:start_scale=2.2:end_scale=2.2:maxiter=200" -frames:v 1 -q:v 7 cover.jpg
ff -f lavfi -i "mandelbrot=s=350x350:start_scale=2.2:end_scale=2.2:maxiter=200" -frames:v 1 -q:v 8 cover-350x350.jpg
ff -f lavfi -i "smptehdbars=s=480x96" -frames:v 1 masthead.png

a=articles/01-the-lighthouse-keepers
ff -f lavfi -i "mandelbrot=s=640x427:start_x=-0.743643887037151:start_y=0.13182590420533:start_scale=0.01:end_scale=0.01:maxiter=300" -frames:v 1 -q:v 11 "$a/lamp-room.jpg"
ff -f lavfi -i "life=s=150x100:mold=10:r=1:ratio=0.2:death_color=#1b3a5c:life_color=#e8c07d,scale=600:400:flags=neighbor" -frames:v 1 -q:v 12 "$a/keepers log.jpg"

a=articles/02-night-ferry
ff -f lavfi -i "sine=frequency=220:duration=6,volume=0.4" -f lavfi -i "sine=frequency=330:duration=6,volume=0.2" \
   -filter_complex amix=inputs=2 -ac 1 -ar 22050 -c:a libmp3lame -b:a 32k "$a/interview.mp3"
ff -f lavfi -i "cellauto=s=175x175:rule=110:r=1,negate,scale=350:350:flags=neighbor" -frames:v 1 -q:v 12 "$a/interview-thumb.jpg"
ff -f lavfi -i "rgbtestsrc=s=640x360" -frames:v 1 "$a/deck.png"

a=articles/03-harbour-in-motion
ff -f lavfi -i "testsrc2=s=320x180:r=15:d=3" -f lavfi -i "sine=frequency=523:duration=3,volume=0.2" \
   -c:v libx264 -pix_fmt yuv420p -crf 34 -preset veryslow -c:a aac -b:a 32k -movflags +faststart -shortest "$a/harbour.mp4"
ff -f lavfi -i "testsrc2=s=350x350" -frames:v 1 -q:v 8 "$a/harbour-poster.jpg"
ff -f lavfi -i "gradients=s=200x120:c0=#1b3a5c:c1=#e8c07d:d=1" -frames:v 1 "$a/tide-chart.gif" 2>/dev/null \
  || ff -f lavfi -i "smptebars=s=200x120" -frames:v 1 "$a/tide-chart.gif"
