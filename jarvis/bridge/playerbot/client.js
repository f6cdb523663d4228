#!/usr/bin/env node
// Jarvis's player: a mineflayer client that joins a Minecraft Java server as a player, for
// jarvis/bridge/player.py, which starts one such process per connection and speaks JSON lines
// with it (all policy — which chat is a question, what to send, when, reconnecting — is in Python):
//
//   node client.js '{"host": H, "port": 25565, "username": "Jarvis", "auth": "offline"|"microsoft",
//                    "version": "", "profiles": DIR, "realm": NAME}'
//
// The options are one JSON object, the only argument (keys left out take those defaults).
//
// stdout, one JSON object a line:
//   {"event":"ready","username":..,"uuid":..,"version":..,"online":[names]}   joined and spawned
//   {"event":"player_joined","name":..} / {"event":"player_left","name":..}  the tab list changed
//   {"event":"chat","source":"player","chat_type":"minecraft:chat"|"minecraft:msg_command_incoming"|..,
//    "sender":..,"sender_username":..,"sender_uuid":..,"target":..,"content":..,"text":..}
//                                                  a player_chat packet (1.19+); sender is the name as
//                                                  shown, sender_username the account's (tab list, by UUID)
//   {"event":"chat","source":"system","translate":key|null,"args":[..],"text":..}  any other chat line
//   {"event":"sent","id":n}  /  {"event":"refused","id":n,"why":..}   a message written / not sent
//   {"event":"msa_code","user_code":..,"verification_uri":..,"message":..}  Microsoft sign-in waits
//   {"event":"stalled"} / {"event":"back","stalled_ms":..}  no packet from the server for 1.5 s (vanilla sends the
//                                                  time every second): it is lagging; and when packets come again
//   {"event":"kicked","reason":..,"translate":key|null}  /  {"event":"end","reason":..}  /  {"event":"error","message":..}
// stdin, one JSON object a line:
//   {"op":"say","id":n,"text":..}                 public chat: no line break, at most 256 UTF-16 units,
//                                                  never starting with "/" (refused otherwise)
//   {"op":"whisper","id":n,"to":NAME,"text":..,"command":"msg"}   sends "/msg NAME text" (the same checks,
//                                                  on the whole command; NAME a Minecraft user name)
//   {"op":"quit"}
// The process exits when the connection ends, on quit, or when stdin closes (its parent is gone).
//
// mineflayer's own chat plugin is not loaded: on a 1.21.4 server it throws on every player_chat
// packet (`unknown chat format code: [object Object]`: the packet's chat type is now a registry
// holder; fixed upstream only in releases that need Node 22), which ends the process, and it tells
// whispers from public chat by matching text that players can type. Here the packets are read
// as they come: a vanilla server says which message is a whisper and who sent it.
'use strict'

const readline = require('readline')

const MAX_MESSAGE = 256 // vanilla's chat box and ServerboundChatPacket limit (UTF-16 units, as String.length)
const STALL_MS = 1500 // a server sends the time every second: this long without a packet is a lag spike
const USERNAME = /^[A-Za-z0-9_]{1,16}$/
const COMMANDS = new Set(['msg', 'tell', 'w'])

const DEFAULTS = { host: '127.0.0.1', port: 25565, username: 'Jarvis', auth: 'offline', version: '', profiles: '', realm: '' }

function emit (event, fields = {}) {
  process.stdout.write(JSON.stringify({ event, ...fields }) + '\n')
}

function readOptions (argv) {
  let given = {}
  try {
    given = JSON.parse(argv[2] ?? '{}')
  } catch (err) {
    emit('error', { message: `the options are not a JSON object: ${err.message}`, fatal: true })
    process.exit(2)
  }
  if (given === null || typeof given !== 'object' || Array.isArray(given)) {
    emit('error', { message: 'the options are not a JSON object', fatal: true })
    process.exit(2)
  }
  return { ...DEFAULTS, ...given }
}

const args = readOptions(process.argv)

let mineflayer
let loadChat
try {
  mineflayer = require('mineflayer')
  loadChat = require('prismarine-chat')
} catch (err) {
  emit('error', { message: `mineflayer is not installed next to ${__filename}: ${err.message}`, fatal: true })
  process.exit(2)
}

// mineflayer throws from inside its connection callbacks (say, an unsupported server version):
// reported as one line, and the process ends.
process.on('uncaughtException', err => {
  const message = err?.message ?? String(err)
  emit('error', { message, fatal: /version .* is not supported|not supported, no data for version/i.test(message) })
  finish(1)
})

let ended = false
function finish (code) {
  if (ended) return
  ended = true
  // stdout is flushed before exiting (a pipe write may still be pending)
  process.stdout.write('', () => process.exit(code))
}

const options = {
  host: args.host,
  port: Number(args.port),
  username: args.username,
  auth: args.auth,
  hideErrors: true,
  logErrors: false,
  plugins: { chat: false }, // see the header
  checkTimeoutInterval: 30000 // no packet from the server for 30 s: the connection is gone
}
if (args.version) options.version = args.version
if (args.profiles) options.profilesFolder = args.profiles
if (args.auth === 'microsoft') {
  options.onMsaCode = data => emit('msa_code', {
    user_code: data.user_code, verification_uri: data.verification_uri, message: data.message
  })
}
if (args.realm) options.realms = { pickRealm: realms => realms.find(realm => realm.name === args.realm) }

let bot
try {
  bot = mineflayer.createBot(options)
} catch (err) {
  emit('error', { message: err.message, fatal: true })
  finish(2)
}

let ChatMessage = null
let ready = false

function plain (component) { // a JSON text component (string) or plain text -> its text
  if (component == null) return null
  if (typeof component !== 'string') return new ChatMessage(component).toString()
  try {
    return new ChatMessage(JSON.parse(component)).toString()
  } catch (err) {
    return component
  }
}

// The chat type of a player_chat packet: a registry entry (`{chatType: id}` in 1.21.2+, `{registryIndex}`,
// or a plain id in 1.19-1.20) or one written inline (`{data: {...}}`).
function chatTypeOf (type) {
  const table = bot.registry.chatFormattingById ?? {}
  if (type && typeof type === 'object') {
    if (type.data) return { name: null, translationKey: type.data?.chat?.translation_key ?? null }
    const id = type.chatType ?? type.registryIndex
    return table[bot.supportFeature('incrementedChatType') ? id + 1 : id] ?? null
  }
  return table[type] ?? null
}

function onPlayerChat (data) {
  const format = chatTypeOf(data.type)
  const sender = plain(data.senderName)
  const target = plain(data.targetName)
  let content = data.plainMessage
  if (content == null) content = plain(data.formattedMessage) ?? ''
  if (data.unsignedContent) content = plain(data.unsignedContent) ?? content
  let text = null
  if (format) {
    const params = { sender: { text: sender ?? '' }, target: { text: target ?? '' }, content: { text: content } }
    text = new ChatMessage({ translate: format.formatString, with: format.parameters.map(p => params[p] ?? '') }).toString()
  }
  const account = Object.values(bot.players ?? {}).find(player => player.uuid === data.sender)
  emit('chat', {
    source: 'player',
    chat_type: format?.name ?? null,
    sender,
    sender_username: account?.username ?? null,
    sender_uuid: data.sender ?? null,
    target,
    content,
    text
  })
}

function onSystemChat (data) {
  if (data.positionId === 2 || data.formattedMessage == null) return // the action bar, not chat
  const message = new ChatMessage(JSON.parse(data.formattedMessage))
  emit('chat', {
    source: 'system',
    translate: message.translate ?? null,
    args: (message.with ?? []).map(part => part.toString()),
    text: message.toString()
  })
}

function validText (text) {
  if (typeof text !== 'string' || !text.trim()) return 'empty'
  if (/[\u0000-\u001f\u007f\u00a7]/.test(text)) return 'a line break, control character or section sign'
  return null
}

function send (request) {
  const { op, id } = request
  let line
  if (op === 'say') {
    line = request.text
    const bad = validText(line) ?? (line.startsWith('/') ? 'a public message that would run a command' : null)
    if (bad) return emit('refused', { id, why: bad })
  } else if (op === 'whisper') {
    const command = request.command ?? 'msg'
    if (!COMMANDS.has(command)) return emit('refused', { id, why: `not a whisper command: ${command}` })
    if (!USERNAME.test(request.to ?? '')) return emit('refused', { id, why: 'not a player name' })
    const bad = validText(request.text)
    if (bad) return emit('refused', { id, why: bad })
    line = `/${command} ${request.to} ${request.text}`
  } else {
    return emit('refused', { id, why: `unknown op ${op}` })
  }
  if (line.length > MAX_MESSAGE) return emit('refused', { id, why: `longer than ${MAX_MESSAGE} characters` })
  if (!ready) return emit('refused', { id, why: 'not joined yet' })
  bot._client.chat(line) // chat_message, or chat_command for our own /msg
  emit('sent', { id })
}

bot.once('inject_allowed', () => {
  ChatMessage = loadChat(bot.registry)
  bot._client.on('playerChat', data => {
    try { onPlayerChat(data) } catch (err) { emit('error', { message: `player chat: ${err.message}` }) }
  })
  bot._client.on('systemChat', data => {
    try { onSystemChat(data) } catch (err) { emit('error', { message: `system chat: ${err.message}` }) }
  })
})

let lastPacket = Date.now()
let stalledSince = null
bot._client.on('packet', () => {
  lastPacket = Date.now()
  if (stalledSince !== null) {
    emit('back', { stalled_ms: lastPacket - stalledSince })
    stalledSince = null
  }
})
setInterval(() => {
  if (ready && stalledSince === null && Date.now() - lastPacket > STALL_MS) {
    stalledSince = lastPacket
    emit('stalled')
  }
}, 250).unref()

bot.once('spawn', () => {
  ready = true
  emit('ready', {
    username: bot.username, uuid: bot._client.uuid ?? bot.player?.uuid ?? null, version: bot.version, online: Object.keys(bot.players)
  })
})
// The tab list arrives around the spawn, partly after it: every change is reported, from the start.
bot.on('playerJoined', player => emit('player_joined', { name: player.username }))
bot.on('playerLeft', player => emit('player_left', { name: player.username }))

bot.on('kicked', reason => {
  let message = null
  try { // a JSON string, or (1.20.3+) an NBT compound
    const json = typeof reason === 'string' ? reason : loadChat.processNbtMessage(reason)
    message = new ChatMessage(JSON.parse(json))
  } catch (err) {
    message = null
  }
  emit('kicked', { reason: message ? message.toString() : String(reason), translate: message?.translate ?? null })
})
bot.on('error', err => emit('error', { message: err.message ?? String(err), code: err.code ?? null }))
bot.on('end', reason => {
  emit('end', { reason: String(reason ?? '') })
  finish(0)
})

const input = readline.createInterface({ input: process.stdin })
input.on('line', line => {
  let request
  try {
    request = JSON.parse(line)
  } catch (err) {
    return emit('refused', { id: null, why: 'not JSON' })
  }
  if (request.op === 'quit') {
    bot.quit()
    setTimeout(() => finish(0), 2000).unref()
    return
  }
  try { send(request) } catch (err) { emit('error', { message: `send: ${err.message}` }) }
})
input.on('close', () => {
  if (!ended) {
    try { bot.quit() } catch (err) {}
    setTimeout(() => finish(0), 1000).unref()
  }
})
