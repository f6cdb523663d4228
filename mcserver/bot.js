#!/usr/bin/env node
// A bot player (mineflayer) that joins the server, asks Jarvis questions in chat, prints the
// chat transcript and leaves. Always exits by itself (--max-seconds).
//
//   node bot.js [--host 127.0.0.1] [--port 25565] [--username Steve] [--players 1]
//               [--question "jarvis, what do cows drop?" ...] [--interval 3.5]
//               [--reply-timeout 20] [--settle 1] [--max-seconds 90] [--spread] [--json]
//               [--jarvis NAME] [--listen]
//
// Each question waits for Jarvis's first reply line addressed to this player
// (`[Jarvis] <name>: ...` from the chat API; with --jarvis NAME, Jarvis is the player NAME:
// `<NAME> <name>: ...` in public or `NAME whispers to you: ...`) or --reply-timeout. A question
// may be a command: "/msg Jarvis how do I ..." whispers it. Questions are at least --interval seconds
// apart (Jarvis rate-limits each player). --players N joins N bots (<username>1..N) that all
// ask the same questions at the same time: a burst; with --spread the questions are dealt out
// round-robin instead (player k asks questions k, k+N, ...). --listen asks nothing: the bot stays
// until --max-seconds, printing the chat it sees. Output: the transcript as text, or with
// --json one JSON object a line: {"t", "event": "chat"|"sent"|"reply"|"no_reply"|"done"|"error", ...}
// ("reply" has "private": true for a whisper).
// Exit status: 0 when every question got a reply, 1 when some did not, 2 when joining failed.
//
// mineflayer 4.25's chat plugin throws on a 1.21.4 server's player_chat packet (its chat type is a
// registry holder, {chatType: id}, where the plugin expects the id): the id is put in its place
// before the plugin sees the packet, as later mineflayer releases read it.
'use strict'

const { parseArgs } = require('util')

const { values: args } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '25565' },
    username: { type: 'string', default: 'Steve' },
    players: { type: 'string', default: '1' },
    question: { type: 'string', multiple: true, default: ['jarvis, what do cows drop?'] },
    interval: { type: 'string', default: '3.5' },
    'reply-timeout': { type: 'string', default: '20' },
    settle: { type: 'string', default: '1' },
    'max-seconds': { type: 'string', default: '90' },
    spread: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    jarvis: { type: 'string', default: '' },
    listen: { type: 'boolean', default: false }
  }
})

let mineflayer
try {
  mineflayer = require('mineflayer')
} catch (err) {
  console.error('bot: node_modules missing: run `make setup` (or `npm ci` in mcserver/)')
  process.exit(2)
}

const VERSION = '1.21.4' // the server's version (server.js)
const started = Date.now()
const seconds = () => (Date.now() - started) / 1000
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

function emit (event, fields) {
  const record = { t: Number(seconds().toFixed(3)), event, ...fields }
  if (args.json) {
    console.log(JSON.stringify(record))
  } else if (event === 'chat') {
    console.log(fields.text)
  } else if (event === 'no_reply') {
    console.log(`-- ${fields.player}: no reply within ${args['reply-timeout']} s to: ${fields.question}`)
  } else if (event === 'error') {
    console.log(`-- ${fields.player}: ${fields.message}`)
  }
}

function finish (code, reason) {
  emit('done', { reason, code })
  process.exit(code)
}

function joinedBot (username, printChat) {
  return new Promise((resolve, reject) => {
    const bot = mineflayer.createBot({
      host: args.host, port: Number(args.port), username, version: VERSION, auth: 'offline', hideErrors: true
    })
    bot.replyWaiters = []
    bot._client.prependListener('playerChat', data => {
      if (data.type && typeof data.type === 'object' && data.type.chatType != null) data.type = data.type.chatType
    })
    const jarvis = args.jarvis
    bot.on('messagestr', text => {
      if (printChat) emit('chat', { player: username, text })
      let reply = null
      if (!jarvis && text.startsWith(`[Jarvis] ${username}:`)) reply = { text, private: false }
      if (jarvis && text.startsWith(`<${jarvis}> ${username}: `)) reply = { text, private: false }
      if (jarvis && text.startsWith(`${jarvis} whispers to you: `)) reply = { text, private: true }
      if (reply) {
        const waiter = bot.replyWaiters.shift()
        if (waiter) waiter(reply)
      }
    })
    bot.once('spawn', () => resolve(bot))
    bot.once('error', err => reject(err))
    bot.once('kicked', reason => reject(new Error(`kicked: ${JSON.stringify(reason)}`)))
    bot.once('end', reason => reject(new Error(`disconnected: ${reason}`)))
  })
}

function waitForReply (bot, timeoutMs) {
  return new Promise(resolve => {
    let done = false
    const waiter = text => { if (!done) { done = true; clearTimeout(timer); resolve(text) } }
    const timer = setTimeout(() => {
      if (done) return
      done = true
      bot.replyWaiters.splice(bot.replyWaiters.indexOf(waiter), 1)
      resolve(null)
    }, timeoutMs)
    bot.replyWaiters.push(waiter)
  })
}

async function askAll (bot, username, questions) {
  let answered = 0
  let lastSent = -Infinity
  for (const question of questions) {
    const wait = lastSent + Number(args.interval) * 1000 - Date.now()
    if (wait > 0) await sleep(wait)
    const reply = waitForReply(bot, Number(args['reply-timeout']) * 1000)
    lastSent = Date.now()
    bot.chat(question)
    emit('sent', { player: username, text: question })
    const got = await reply
    if (got === null) {
      emit('no_reply', { player: username, question })
    } else {
      answered += 1
      emit('reply', { player: username, question, text: got.text, private: got.private, latency_ms: Date.now() - lastSent })
    }
  }
  return answered
}

async function main () {
  setTimeout(() => finish(args.listen ? 0 : 1, 'max-seconds'), Number(args['max-seconds']) * 1000).unref()
  const count = Math.max(1, Number(args.players))
  const names = count === 1 ? [args.username] : Array.from({ length: count }, (_, i) => `${args.username}${i + 1}`)
  let bots
  try {
    bots = await Promise.all(names.map((name, i) => joinedBot(name, i === 0)))
  } catch (err) {
    emit('error', { player: names[0], message: `cannot join ${args.host}:${args.port}: ${err.message}` })
    finish(2, 'join failed')
  }
  await sleep(500) // let the join messages pass
  if (args.listen) {
    await sleep(Number(args['max-seconds']) * 1000)
    return
  }
  const questionsOf = i => args.spread ? args.question.filter((_, q) => q % count === i) : args.question
  const answered = await Promise.all(bots.map((bot, i) => askAll(bot, names[i], questionsOf(i))))
  await sleep(Number(args.settle) * 1000) // the last reply may have more lines
  const total = answered.reduce((a, b) => a + b, 0)
  const asked = names.reduce((sum, _, i) => sum + questionsOf(i).length, 0)
  for (const bot of bots) bot.quit()
  finish(total === asked ? 0 : 1, `${total} of ${asked} answered`)
}

main()
