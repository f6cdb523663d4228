#!/usr/bin/env node
// A crowd of players for benchmarks: mineflayer bots that join the server, say what they are told,
// report every chat line they read, and join again whenever they are disconnected (a kick, a
// server restart), as people do.
//
//   node players.js --port P [--host 127.0.0.1] --names Player0,Player1,... [--rejoin-seconds 3] [--watch Jarvis]
//
// stdin, one JSON object a line:  {"player": NAME, "text": "..."}   (a text starting with "/" is a
//                                  command: "/msg Jarvis how do I ..." whispers)
// stdout, one JSON object a line: {"t": seconds, "event": "joined"|"left"|"chat"|"sent"|"not_sent",
//                                  "player": NAME, "text"?: ..., "reason"?: ..., "watched_online"?: bool}
//                                  (sent: whether the --watch player was in the tab list then)
// Runs until stdin closes.
//
// mineflayer 4.25's chat plugin throws on a 1.21.4 server's player_chat packet (its chat type is a
// registry holder, {chatType: id}): the id is put in its place first, as later releases read it.
'use strict'

const readline = require('readline')
const { parseArgs } = require('util')
const mineflayer = require('mineflayer')

const { values: args } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '25565' },
    names: { type: 'string', default: 'Player0' },
    'rejoin-seconds': { type: 'string', default: '3' },
    watch: { type: 'string', default: 'Jarvis' }
  }
})

const started = Date.now()
function emit (event, fields) {
  process.stdout.write(JSON.stringify({ t: Number(((Date.now() - started) / 1000).toFixed(3)), event, ...fields }) + '\n')
}

const bots = new Map()
let closing = false

function join (name) {
  const bot = mineflayer.createBot({
    host: args.host, port: Number(args.port), username: name, version: '1.21.4', auth: 'offline', hideErrors: true, logErrors: false
  })
  bot._client.prependListener('playerChat', data => {
    if (data.type && typeof data.type === 'object' && data.type.chatType != null) data.type = data.type.chatType
  })
  bot.ready = false
  bot.once('spawn', () => {
    bot.ready = true
    emit('joined', { player: name })
  })
  bot.on('messagestr', text => emit('chat', { player: name, text }))
  bot.on('error', () => {})
  bot.once('end', reason => {
    bot.ready = false
    emit('left', { player: name, reason: String(reason ?? '') })
    if (!closing) setTimeout(() => join(name), Number(args['rejoin-seconds']) * 1000)
  })
  bots.set(name, bot)
}

for (const name of args.names.split(',')) join(name)

readline.createInterface({ input: process.stdin }).on('line', line => {
  let request
  try {
    request = JSON.parse(line)
  } catch (err) {
    return
  }
  const bot = bots.get(request.player)
  if (!bot || !bot.ready) return emit('not_sent', { player: request.player, text: request.text })
  bot.chat(request.text)
  // whether the player named by --watch (Jarvis) was in the tab list when this was said
  emit('sent', { player: request.player, text: request.text, watched_online: Boolean(bot.players[args.watch]) })
}).on('close', () => {
  closing = true
  for (const bot of bots.values()) {
    try { bot.quit() } catch (err) {}
  }
  setTimeout(() => process.exit(0), 1000)
})
