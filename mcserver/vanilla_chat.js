// A flying-squid plugin that makes the test server's chat as strict as a vanilla 1.21.4 server's,
// as a client sees it (Mojang's server: ServerGamePacketListenerImpl.handleChat / handleChatCommand /
// tryHandleChat / detectRateSpam, PlayerList.broadcastChatMessage, commands/MsgCommand), so that a
// bot that behaves here behaves on a real server:
//
// - Public chat reaches every player as a `player_chat` packet of chat type minecraft:chat
//   (chat.type.text, "<%s> %s"), the sender included, unsigned (an offline-mode server), instead
//   of flying-squid's own system text.
// - /msg, /tell and /w <player> <message> (MsgCommand, aliases tell and w): the target gets a
//   `player_chat` of type minecraft:msg_command_incoming ("%s whispers to you: %s"), the sender one
//   of type minecraft:msg_command_outgoing ("You whisper to %s: %s"); nobody else sees anything.
//   An unknown player: "No player was found" (argument.entity.notfound.player), in red.
// - Spam: every chat message and every command adds 20 to the player's counter, which drops by 1
//   each tick (TickThrottler(20, 200)); at 200 the player is kicked with disconnect.spam
//   ("Kicked for spamming"): a burst of 9, then 1 a second. Operators are exempt.
// - Illegal characters (section sign, control characters, DEL: StringUtil.isAllowedChatCharacter)
//   in a message or command: kicked with multiplayer.disconnect.illegal_characters, nothing shown.
// - A chat message longer than 256 characters fails to decode (readUtf(256)): disconnected.
//   (Commands are read up to 32767 characters, as vanilla reads them.)
// - The tab list (PlayerList.placeNewPlayer / remove): a joining player gets every online player
//   in a player_info (add_player, listed, game mode, latency), the others get the newcomer; a
//   leaving player is removed with player_remove. (flying-squid 1.12 sends a newcomer's list to
//   the others instead of to the newcomer, and no removal in 1.19.3+: a client saw no tab list.)
//
// Every message and command received, every whisper and every kick is printed on stdout as one
// line, `VANILLA {"event": "chat"|"command"|"whisper"|"kick", "player": ..., "text"|"reason": ...}`
// (a chat message shown to players has "to": [their names]; a whisper "target"), for tests and
// benchmarks to count. server.js loads it; `serv.vanillaChat` has the same records.
'use strict'

const nbt = require('prismarine-nbt')

const SPAM_STEP = 20
const SPAM_THRESHOLD = 200
const MAX_CHAT_CHARS = 256
const TICK_MS = 50

function allowedChatCharacter (char) {
  const code = char.codePointAt(0)
  return code !== 0xa7 && code >= 32 && code !== 127
}

module.exports.server = function (serv) {
  const entries = serv.registry.loginPacket?.dimensionCodec?.['minecraft:chat_type']?.entries ?? []
  function chatType (name) {
    const id = entries.findIndex(entry => entry.key === `minecraft:${name}`)
    if (id < 0) throw new Error(`vanilla_chat: no chat type minecraft:${name} in this version's registry`)
    return id
  }
  const CHAT = chatType('chat')
  const INCOMING = chatType('msg_command_incoming')
  const OUTGOING = chatType('msg_command_outgoing')

  const records = { received: [], kicks: [] }
  serv.vanillaChat = records

  function record (event, fields) {
    const line = { event, ...fields }
    if (event === 'kick') records.kicks.push(line)
    else records.received.push(line)
    console.log('VANILLA ' + JSON.stringify(line))
  }

  const text = value => nbt.comp({ text: nbt.string(value) })

  // ClientboundPlayerChatPacket as the vanilla server writes it for an unsigned message.
  function sendPlayerChat (recipient, sender, type, content, target) {
    recipient._client.write('player_chat', {
      senderUuid: sender.uuid,
      index: sender.vanillaChatIndex++,
      signature: undefined,
      plainMessage: content,
      timestamp: BigInt(Date.now()),
      salt: 0n,
      previousMessages: [],
      unsignedChatContent: undefined,
      filterType: 0,
      filterTypeMask: undefined,
      type: { chatType: type },
      networkName: text(sender.username),
      networkTargetName: target ? text(target.username) : undefined
    })
  }

  // Disconnects with a translatable reason (the key is what the records show), as vanilla's
  // ServerGamePacketListenerImpl.disconnect(Component.translatable(key)) does.
  serv.vanillaChat.kick = (player, key, english) => {
    record('kick', { player: player.username, reason: key })
    player._client.end(english, nbt.comp({ translate: nbt.string(key) }))
  }
  serv.vanillaChat.record = record

  serv.vanillaChat.broadcast = (sender, message) => {
    for (const player of serv.players) sendPlayerChat(player, sender, CHAT, message)
    return serv.players.map(player => player.username)
  }

  serv.vanillaChat.whisper = (sender, target, message) => {
    sendPlayerChat(target, sender, INCOMING, message)
    sendPlayerChat(sender, sender, OUTGOING, message, target)
    record('whisper', { player: sender.username, target: target.username, text: message })
  }

  const ticker = setInterval(() => {
    for (const player of serv.players) {
      if (player.spamCounter > 0) player.spamCounter -= 1
    }
  }, TICK_MS)
  ticker.unref()

  serv.commands.add({
    base: 'msg',
    aliases: ['tell', 'w'],
    info: 'to whisper to a player',
    usage: '/msg <player> <message>',
    onlyPlayer: true,
    parse (str) {
      const match = str.match(/^(\S+) (.+)$/s)
      return match ? { name: match[1], message: match[2] } : false
    },
    action ({ name, message }, ctx) {
      const target = serv.players.find(p => p.username.toLowerCase() === name.toLowerCase())
      if (!target) return 'No player was found'
      serv.vanillaChat.whisper(ctx.player, target, message)
    }
  })
}

function tabListEntry (player) {
  return {
    uuid: player.uuid,
    player: { name: player.username, properties: player.profileProperties ?? [] },
    gamemode: player.gameMode ?? 0,
    listed: 1,
    latency: player._client.latency ?? 0
  }
}

const ADD_PLAYER = { add_player: true, update_game_mode: true, update_listed: true, update_latency: true }

module.exports.player = function (player, serv) {
  player.spamCounter = 0
  player.vanillaChatIndex = 0
  const chat = serv.vanillaChat

  player.once('spawned', () => {
    player._client.write('player_info', { action: ADD_PLAYER, data: serv.players.map(tabListEntry) })
    for (const other of serv.players) {
      if (other !== player) other._client.write('player_info', { action: ADD_PLAYER, data: [tabListEntry(player)] })
    }
  })
  player.once('disconnected', () => {
    for (const other of serv.players) {
      if (other !== player) other._client.write('player_remove', { players: [player.uuid] })
    }
  })

  function detectRateSpam () {
    player.spamCounter += SPAM_STEP
    if (player.spamCounter >= SPAM_THRESHOLD && !player.op) chat.kick(player, 'disconnect.spam', 'Kicked for spamming')
  }

  function illegal (message) {
    if ([...message].every(allowedChatCharacter)) return false
    chat.kick(player, 'multiplayer.disconnect.illegal_characters', 'Illegal characters in chat')
    return true
  }

  // flying-squid's chat behaviour: its own broadcast (system text) is replaced by vanilla's. A
  // hidden cancel still lets the other plugins (the RaspberryJuice API) see the message; a
  // visible one tells them it was never said.
  player.on('chat_cancel', (data, cancel) => {
    const message = data.message
    if (typeof message !== 'string') return
    if (message.length > MAX_CHAT_CHARS) { // readUtf(256) fails: the connection is closed
      chat.record('chat', { player: player.username, text: message, to: [] })
      cancel(false, false)
      chat.kick(player, 'disconnect.packetError', 'Network Protocol Error')
      return
    }
    if ([...message].some(char => !allowedChatCharacter(char))) {
      chat.record('chat', { player: player.username, text: message, to: [] })
      cancel(false, false)
      illegal(message)
      return
    }
    cancel(false, true)
    chat.record('chat', { player: player.username, text: message, to: chat.broadcast(player, message) })
    detectRateSpam()
  })

  player.on('command_cancel', ({ command }, cancel) => {
    chat.record('command', { player: player.username, text: command })
    if (illegal(command)) cancel(false, false)
  })
  player.on('command_done', (data, cancelled) => {
    if (!cancelled) detectRateSpam()
  })
}
