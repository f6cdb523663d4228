// A flying-squid plugin that speaks the chat subset of the Minecraft Pi / RaspberryJuice API
// on a local TCP port, so Jarvis (Python, `mcpi`) can read and write the game chat.
//
// Wire format, as RaspberryJuice has it: one command a line, `name(arg,arg,...)\n`; the name
// runs to the first `(`, the arguments to the line's last character (the closing `)`), so a
// `(` or `)` inside a chat message is harmless. Requests that return something get one line back.
//
//   chat.post(message)                -> (nothing)      broadcast `message` to every player, verbatim
//   events.chat.posts()               -> id,msg|id,msg  chat posted by players since the last call
//   events.clear() / events.clearAll()-> (nothing)      forget this session's pending events
//   entity.getName(id)                -> name | Fail
//   world.getPlayerIds()              -> id|id|... | Fail  (alias: world.getPlayerEntityIds)
//   anything else                     -> Fail
//
// Event buffers are per connection (a new connection starts empty), and bounded.
// Settings (flying-squid `plugins` entry): { host: '127.0.0.1', port: 4711, maxEvents: 1000 }.
'use strict'

const net = require('net')

module.exports.server = function (serv) {
  // flying-squid calls this with `this` = our plugin entry, whose .settings is our options object.
  const options = { host: '127.0.0.1', port: 4711, maxEvents: 1000, ...(this?.settings || {}) }
  const sessions = new Set()

  serv.raspberryJuice = { sessions, options, listening: false }

  // Every player's chat (not commands) goes to every connected session's buffer. A vanilla
  // server kicks a client that sends line breaks in chat; flying-squid does not check, so a
  // line break would split the reply line here: made a space.
  serv.raspberryJuice.recordChat = (player, message) => {
    const text = message.replace(/[\r\n]/g, ' ')
    for (const session of sessions) {
      session.chatEvents.push(`${player.id},${text}`)
      if (session.chatEvents.length > options.maxEvents) session.chatEvents.shift()
    }
  }

  function playerById (id) {
    return serv.players.find(p => String(p.id) === String(id).trim())
  }

  function handle (session, line) {
    const open = line.indexOf('(')
    if (open < 0) return 'Fail'
    const name = line.slice(0, open)
    const args = line.endsWith(')') ? line.slice(open + 1, -1) : line.slice(open + 1)
    switch (name) {
      case 'chat.post':
        // An object, not a string: flying-squid would otherwise read `&c` as a colour code.
        serv.broadcast({ text: args })
        return null
      case 'events.chat.posts': {
        const reply = session.chatEvents.join('|')
        session.chatEvents = []
        return reply
      }
      case 'events.clear':
      case 'events.clearAll':
        session.chatEvents = []
        return null
      case 'entity.getName': {
        const player = playerById(args)
        return player && player.username ? player.username : 'Fail'
      }
      case 'world.getPlayerIds':
      case 'world.getPlayerEntityIds':
        return serv.players.length ? serv.players.map(p => p.id).join('|') : 'Fail' // as RaspberryJuice
      default:
        serv.info(`[raspberryjuice] unsupported command: ${name}`)
        return 'Fail' // as RaspberryJuice does
    }
  }

  const server = net.createServer(socket => {
    const session = { chatEvents: [], buffer: '' }
    sessions.add(session)
    socket.setEncoding('utf8')
    socket.setNoDelay(true)
    serv.info(`[raspberryjuice] API client connected from ${socket.remoteAddress}`)
    socket.on('data', chunk => {
      session.buffer += chunk
      let newline
      while ((newline = session.buffer.indexOf('\n')) >= 0) {
        const line = session.buffer.slice(0, newline).replace(/\r$/, '')
        session.buffer = session.buffer.slice(newline + 1)
        if (!line) continue
        let reply
        try {
          reply = handle(session, line)
        } catch (err) {
          serv.warn(`[raspberryjuice] ${line.slice(0, 60)} failed: ${err.message}`)
          reply = 'Fail'
        }
        if (reply !== null) socket.write(reply + '\n')
      }
      if (session.buffer.length > 1 << 20) socket.destroy() // a line longer than 1 MiB is not a command
    })
    const forget = () => {
      if (sessions.delete(session)) serv.info('[raspberryjuice] API client disconnected')
    }
    socket.on('close', forget)
    socket.on('error', forget)
  })
  server.on('error', err => {
    serv.err(`[raspberryjuice] cannot listen on ${options.host}:${options.port}: ${err.message}`)
    serv.emit('raspberryJuiceError', err)
  })
  server.listen(options.port, options.host, () => {
    serv.raspberryJuice.listening = true
    serv.raspberryJuice.port = server.address().port
    serv.emit('raspberryJuiceListening', server.address().port)
  })
  serv.raspberryJuice.close = () => {
    for (const session of sessions) sessions.delete(session)
    server.close()
  }
}

module.exports.player = function (player, serv) {
  // 'chat' is flying-squid's behaviour event for a chat line (commands are a separate event);
  // `cancelled` is true when another plugin vetoed the message.
  player.on('chat', ({ message }, cancelled) => {
    if (!cancelled && typeof message === 'string') serv.raspberryJuice?.recordChat(player, message)
  })
}
