/**
 * A labelled development set for the structure extractor (extractors/structure/): 150+ sentences
 * written for this project (news, chat turns, documents), each with the named entities it names
 * (people, organisations, places, dates, products, money) and the subject–predicate–object facts
 * it states, predicates in the extractor's normalised verb form. Scored by bench/extraction/score.ts
 * (`BENCH_ONLY=extraction`). For development: the held-out set the project is judged on is not here.
 */
import { chat, doc, news, type LabelledSentence } from './score.js';

export const EXTRACTION_DEV_SET: LabelledSentence[] = [
  // News
  news('Maria Lopez was named chief executive of Veltra Systems on Monday.', [
    ['Maria Lopez', 'person'],
    ['Veltra Systems', 'organization'],
    ['Monday', 'date'],
  ]),
  news(
    'Harbor Foods acquired the bakery chain Crumbly for $40 million.',
    [
      ['Harbor Foods', 'organization'],
      ['Crumbly', 'organization'],
      ['$40 million', 'money'],
    ],
    [['Harbor Foods', 'acquire', 'Crumbly']],
  ),
  news('The city of Porto opened a new metro line in June 2024.', [
    ['Porto', 'place'],
    ['June 2024', 'date'],
  ]),
  news(
    'Kenji Watanabe joined Mitsuba Robotics as head of research.',
    [
      ['Kenji Watanabe', 'person'],
      ['Mitsuba Robotics', 'organization'],
    ],
    [['Kenji Watanabe', 'join', 'Mitsuba Robotics']],
  ),
  news(
    'Greenfield Energy will build a solar farm near Tucson.',
    [
      ['Greenfield Energy', 'organization'],
      ['Tucson', 'place'],
    ],
    [['Greenfield Energy', 'build', 'solar farm']],
  ),
  news('Police in Leeds arrested two men after a robbery on Friday.', [
    ['Leeds', 'place'],
    ['Friday', 'date'],
  ]),
  news(
    'Nadia Petrova won the Oslo marathon in record time.',
    [
      ['Nadia Petrova', 'person'],
      ['Oslo', 'place'],
    ],
    [['Nadia Petrova', 'win', 'Oslo marathon']],
  ),
  news(
    'Brightwave launched the Pulse X2 headphones in Berlin.',
    [
      ['Brightwave', 'organization'],
      ['Pulse X2', 'product'],
      ['Berlin', 'place'],
    ],
    [['Brightwave', 'launch', 'Pulse X2']],
  ),
  news(
    'The European Central Bank raised interest rates in September.',
    [
      ['European Central Bank', 'organization'],
      ['September', 'date'],
    ],
    [['European Central Bank', 'raise', 'interest rates']],
  ),
  news(
    'Omar Haddad founded Sandline Logistics in 2015.',
    [
      ['Omar Haddad', 'person'],
      ['Sandline Logistics', 'organization'],
      ['2015', 'date'],
    ],
    [['Omar Haddad', 'found', 'Sandline Logistics']],
  ),
  news(
    'Tesla recalled 12,000 vehicles sold in Canada.',
    [
      ['Tesla', 'organization'],
      ['Canada', 'place'],
    ],
    [['Tesla', 'recall', 'vehicles']],
  ),
  news(
    'Lena Fischer moved from Munich to Vienna last year.',
    [
      ['Lena Fischer', 'person'],
      ['Munich', 'place'],
      ['Vienna', 'place'],
    ],
    [['Lena Fischer', 'move to', 'Vienna']],
  ),
  news(
    'Northwind Airlines cancelled flights to Dublin because of the storm.',
    [
      ['Northwind Airlines', 'organization'],
      ['Dublin', 'place'],
    ],
    [['Northwind Airlines', 'cancel', 'flights']],
  ),
  news(
    'Samuel Okafor leads the engineering team at Paystack.',
    [
      ['Samuel Okafor', 'person'],
      ['Paystack', 'organization'],
    ],
    [['Samuel Okafor', 'lead', 'engineering team']],
  ),
  news(
    'The museum in Florence received a rare painting from a private donor.',
    [['Florence', 'place']],
    [['museum', 'receive', 'painting']],
  ),
  news(
    'Apple released iOS 18 on September 16, 2024.',
    [
      ['Apple', 'organization'],
      ['iOS 18', 'product'],
      ['September 16, 2024', 'date'],
    ],
    [['Apple', 'release', 'iOS 18']],
  ),
  news(
    'Clara Jensen resigned from Nordbank after ten years.',
    [
      ['Clara Jensen', 'person'],
      ['Nordbank', 'organization'],
    ],
    [['Clara Jensen', 'resign from', 'Nordbank']],
  ),
  news(
    'Microsoft signed a cloud deal with the government of Kenya.',
    [
      ['Microsoft', 'organization'],
      ['Kenya', 'place'],
    ],
    [['Microsoft', 'sign', 'cloud deal']],
  ),
  news('Farmers in Punjab protested against the new water rules.', [['Punjab', 'place']], [['farmers', 'protest against', 'water rules']]),
  news(
    'Rafael Costa scored twice as Benfica beat Porto on Sunday.',
    [
      ['Rafael Costa', 'person'],
      ['Benfica', 'organization'],
      ['Porto', 'organization'],
      ['Sunday', 'date'],
    ],
    [['Benfica', 'beat', 'Porto']],
  ),
  news(
    'The startup Lumio raised $12 million from Sequoia Capital.',
    [
      ['Lumio', 'organization'],
      ['$12 million', 'money'],
      ['Sequoia Capital', 'organization'],
    ],
    [['Lumio', 'raise', '$12 million']],
  ),
  news(
    'Aiko Tanaka will direct the Kyoto film festival in 2025.',
    [
      ['Aiko Tanaka', 'person'],
      ['Kyoto', 'place'],
      ['2025', 'date'],
    ],
    [['Aiko Tanaka', 'direct', 'Kyoto film festival']],
  ),
  news(
    'Siemens is closing its factory in Erlangen.',
    [
      ['Siemens', 'organization'],
      ['Erlangen', 'place'],
    ],
    [['Siemens', 'close', 'factory']],
  ),
  news(
    'David Mensah married Grace Owusu in Accra.',
    [
      ['David Mensah', 'person'],
      ['Grace Owusu', 'person'],
      ['Accra', 'place'],
    ],
    [['David Mensah', 'marry', 'Grace Owusu']],
  ),
  news(
    'The World Health Organization warned of a measles outbreak in Romania.',
    [
      ['World Health Organization', 'organization'],
      ['Romania', 'place'],
    ],
    [['World Health Organization', 'warn of', 'measles outbreak']],
  ),
  news(
    'Pedro Alvarez sold his stake in Ferrovia for $3 billion.',
    [
      ['Pedro Alvarez', 'person'],
      ['Ferrovia', 'organization'],
      ['$3 billion', 'money'],
    ],
    [['Pedro Alvarez', 'sell', 'stake']],
  ),
  news(
    'Amazon opened a warehouse outside Lyon in March.',
    [
      ['Amazon', 'organization'],
      ['Lyon', 'place'],
      ['March', 'date'],
    ],
    [['Amazon', 'open', 'warehouse']],
  ),
  news(
    'Ingrid Holm teaches physics at Uppsala University.',
    [
      ['Ingrid Holm', 'person'],
      ['Uppsala University', 'organization'],
    ],
    [['Ingrid Holm', 'teach', 'physics']],
  ),
  news(
    'Volvo unveiled the EX30 at a show in Milan.',
    [
      ['Volvo', 'organization'],
      ['EX30', 'product'],
      ['Milan', 'place'],
    ],
    [['Volvo', 'unveil', 'EX30']],
  ),
  news('Hassan Ali was elected mayor of Bristol in May 2023.', [
    ['Hassan Ali', 'person'],
    ['Bristol', 'place'],
    ['May 2023', 'date'],
  ]),
  news('Google fined by the French regulator over cookie banners.', [['Google', 'organization']]),
  news(
    'Julia Novak works for the Red Cross in Geneva.',
    [
      ['Julia Novak', 'person'],
      ['Red Cross', 'organization'],
      ['Geneva', 'place'],
    ],
    [['Julia Novak', 'work for', 'Red Cross']],
  ),
  news(
    'Samsung delayed the Galaxy Fold 6 until next spring.',
    [
      ['Samsung', 'organization'],
      ['Galaxy Fold 6', 'product'],
    ],
    [['Samsung', 'delay', 'Galaxy Fold 6']],
  ),
  news(
    'The United Nations sent aid to Sudan last week.',
    [
      ['United Nations', 'organization'],
      ['Sudan', 'place'],
    ],
    [['United Nations', 'send', 'aid']],
  ),
  news(
    'Marco Bianchi bought a vineyard in Tuscany.',
    [
      ['Marco Bianchi', 'person'],
      ['Tuscany', 'place'],
    ],
    [['Marco Bianchi', 'buy', 'vineyard']],
  ),
  news(
    'Ocean Rescue cleaned 40 tons of plastic from beaches in Bali.',
    [
      ['Ocean Rescue', 'organization'],
      ['Bali', 'place'],
    ],
    [['Ocean Rescue', 'clean', 'plastic']],
  ),
  news(
    'Priya Raman joined Infosys in Bangalore in 2019.',
    [
      ['Priya Raman', 'person'],
      ['Infosys', 'organization'],
      ['Bangalore', 'place'],
      ['2019', 'date'],
    ],
    [['Priya Raman', 'join', 'Infosys']],
  ),
  news(
    'Netflix renewed the series Dark Harbor for a third season.',
    [
      ['Netflix', 'organization'],
      ['Dark Harbor', 'product'],
    ],
    [['Netflix', 'renew', 'Dark Harbor']],
  ),
  news(
    'Thomas Berg left Ericsson to start his own company.',
    [
      ['Thomas Berg', 'person'],
      ['Ericsson', 'organization'],
    ],
    [['Thomas Berg', 'leave', 'Ericsson']],
  ),
  news(
    'Heavy rain flooded roads in Valencia on Tuesday.',
    [
      ['Valencia', 'place'],
      ['Tuesday', 'date'],
    ],
    [['rain', 'flood', 'roads']],
  ),
  news(
    'Airbus delivered 60 planes to Qantas.',
    [
      ['Airbus', 'organization'],
      ['Qantas', 'organization'],
    ],
    [['Airbus', 'deliver', 'planes']],
  ),
  news(
    'Sofia Rossi manages the Rome office of Deloitte.',
    [
      ['Sofia Rossi', 'person'],
      ['Rome', 'place'],
      ['Deloitte', 'organization'],
    ],
    [['Sofia Rossi', 'manage', 'Rome office']],
  ),
  news(
    'Nike hired Jamal Carter as its new marketing director.',
    [
      ['Nike', 'organization'],
      ['Jamal Carter', 'person'],
    ],
    [['Nike', 'hire', 'Jamal Carter']],
  ),
  news(
    'The Louvre welcomed nine million visitors in 2023.',
    [
      ['Louvre', 'organization'],
      ['2023', 'date'],
    ],
    [['Louvre', 'welcome', 'visitors']],
  ),
  news(
    'Elena Sokolova lives in Tallinn with her two children.',
    [
      ['Elena Sokolova', 'person'],
      ['Tallinn', 'place'],
    ],
    [['Elena Sokolova', 'live in', 'Tallinn']],
  ),
  news(
    'Spotify cut 200 jobs in Stockholm.',
    [
      ['Spotify', 'organization'],
      ['Stockholm', 'place'],
    ],
    [['Spotify', 'cut', 'jobs']],
  ),
  news(
    'Ahmed Karim visited the new hospital in Cairo.',
    [
      ['Ahmed Karim', 'person'],
      ['Cairo', 'place'],
    ],
    [['Ahmed Karim', 'visit', 'hospital']],
  ),
  news(
    'Shell sold its oil fields in Nigeria to a local firm.',
    [
      ['Shell', 'organization'],
      ['Nigeria', 'place'],
    ],
    [['Shell', 'sell', 'oil fields']],
  ),
  news(
    'Lucy Wright coaches the national hockey team of Ireland.',
    [
      ['Lucy Wright', 'person'],
      ['Ireland', 'place'],
    ],
    [['Lucy Wright', 'coach', 'national hockey team']],
  ),
  news(
    'IKEA plans to open three stores in Chile by 2026.',
    [
      ['IKEA', 'organization'],
      ['Chile', 'place'],
      ['2026', 'date'],
    ],
    [['IKEA', 'open', 'stores']],
  ),
  news(
    'Victor Hugo Ramos owns a chain of cafes in Bogota.',
    [
      ['Victor Hugo Ramos', 'person'],
      ['Bogota', 'place'],
    ],
    [['Victor Hugo Ramos', 'own', 'chain']],
  ),
  news(
    'The Bank of England kept rates at 5 percent in August.',
    [
      ['Bank of England', 'organization'],
      ['August', 'date'],
    ],
    [['Bank of England', 'keep', 'rates']],
  ),
  news(
    'Anna Kowalska wrote a book about the history of Krakow.',
    [
      ['Anna Kowalska', 'person'],
      ['Krakow', 'place'],
    ],
    [['Anna Kowalska', 'write', 'book']],
  ),
  news(
    'Toyota invested $2 billion in a battery plant in North Carolina.',
    [
      ['Toyota', 'organization'],
      ['$2 billion', 'money'],
      ['North Carolina', 'place'],
    ],
    [['Toyota', 'invest', '$2 billion']],
  ),
  news(
    'Felix Wagner returned to Bayern Munich after two seasons abroad.',
    [
      ['Felix Wagner', 'person'],
      ['Bayern Munich', 'organization'],
    ],
    [['Felix Wagner', 'return to', 'Bayern Munich']],
  ),
  news(
    'Zara opened its largest store on Fifth Avenue.',
    [
      ['Zara', 'organization'],
      ['Fifth Avenue', 'place'],
    ],
    [['Zara', 'open', 'store']],
  ),
  news(
    'Mei Lin studies medicine at the University of Toronto.',
    [
      ['Mei Lin', 'person'],
      ['University of Toronto', 'organization'],
    ],
    [['Mei Lin', 'study', 'medicine']],
  ),
  news(
    'Boeing reported a loss of $1.2 billion for the quarter.',
    [
      ['Boeing', 'organization'],
      ['$1.2 billion', 'money'],
    ],
    [['Boeing', 'report', 'loss']],
  ),
  news(
    'Carlos Mendes replaced Ana Duarte as coach of Sporting.',
    [
      ['Carlos Mendes', 'person'],
      ['Ana Duarte', 'person'],
      ['Sporting', 'organization'],
    ],
    [['Carlos Mendes', 'replace', 'Ana Duarte']],
  ),
  news(
    'The Tokyo Stock Exchange halted trading for an hour on Thursday.',
    [
      ['Tokyo Stock Exchange', 'organization'],
      ['Thursday', 'date'],
    ],
    [['Tokyo Stock Exchange', 'halt', 'trading']],
  ),

  // Chat turns
  chat(
    'user',
    'I moved to Lisbon in April.',
    [
      ['user', 'person'],
      ['Lisbon', 'place'],
      ['April', 'date'],
    ],
    [['user', 'move to', 'Lisbon']],
  ),
  chat(
    'user',
    'My sister Emma works at Spotify now.',
    [
      ['Emma', 'person'],
      ['Spotify', 'organization'],
    ],
    [['Emma', 'work at', 'Spotify']],
  ),
  chat('assistant', 'Paris is a great choice for a first trip to Europe.', [
    ['Paris', 'place'],
    ['Europe', 'place'],
  ]),
  chat(
    'user',
    'I just bought a Kindle Paperwhite for my dad.',
    [
      ['user', 'person'],
      ['Kindle Paperwhite', 'product'],
    ],
    [['user', 'buy', 'Kindle Paperwhite']],
  ),
  chat('user', 'Jake and I are flying to Denver on Friday.', [
    ['Jake', 'person'],
    ['Denver', 'place'],
    ['Friday', 'date'],
  ]),
  chat(
    'user',
    'I started a new job at Shopify last month.',
    [
      ['user', 'person'],
      ['Shopify', 'organization'],
    ],
    [['user', 'start', 'job']],
  ),
  chat('user', 'Can you remind me to call Dr. Patel tomorrow?', [['Dr. Patel', 'person']]),
  chat(
    'user',
    'My manager Rachel wants the report by Thursday.',
    [
      ['Rachel', 'person'],
      ['Thursday', 'date'],
    ],
    [['Rachel', 'want', 'report']],
  ),
  chat(
    'user',
    'I love the pasta at Luigi’s on Main Street.',
    [
      ['user', 'person'],
      ['Luigi’s', 'organization'],
      ['Main Street', 'place'],
    ],
    [['user', 'love', 'pasta']],
  ),
  chat(
    'user',
    'We adopted a puppy from the shelter in Oakland last weekend.',
    [
      ['user', 'person'],
      ['Oakland', 'place'],
    ],
    [['user', 'adopt', 'puppy']],
  ),
  chat(
    'user',
    'I use Notion for all my project notes.',
    [
      ['user', 'person'],
      ['Notion', 'product'],
    ],
    [['user', 'use', 'Notion']],
  ),
  chat(
    'user',
    'My brother Tom lives in Seattle.',
    [
      ['Tom', 'person'],
      ['Seattle', 'place'],
    ],
    [['Tom', 'live in', 'Seattle']],
  ),
  chat('user', 'I am allergic to peanuts.', [['user', 'person']]),
  chat(
    'user',
    'Sarah recommended the Sony WH-1000XM5 headphones to me.',
    [
      ['Sarah', 'person'],
      ['Sony WH-1000XM5', 'product'],
    ],
    [['Sarah', 'recommend', 'Sony WH-1000XM5']],
  ),
  chat(
    'user',
    'I visited my grandmother in Krakow over Christmas.',
    [
      ['user', 'person'],
      ['Krakow', 'place'],
      ['Christmas', 'date'],
    ],
    [['user', 'visit', 'grandmother']],
  ),
  chat('user', 'Our team at Atlassian ships a release every two weeks.', [['Atlassian', 'organization']], [['team', 'ship', 'release']]),
  chat(
    'user',
    'I ran the Chicago marathon in October.',
    [
      ['user', 'person'],
      ['Chicago', 'place'],
      ['October', 'date'],
    ],
    [['user', 'run', 'Chicago marathon']],
  ),
  chat(
    'user',
    'Mike from accounting is leaving the company on March 1.',
    [
      ['Mike', 'person'],
      ['March 1', 'date'],
    ],
    [['Mike', 'leave', 'company']],
  ),
  chat(
    'user',
    'I play guitar in a band called The Night Owls.',
    [
      ['user', 'person'],
      ['The Night Owls', 'organization'],
    ],
    [['user', 'play', 'guitar']],
  ),
  chat(
    'user',
    'My daughter Lily started school in September.',
    [
      ['Lily', 'person'],
      ['September', 'date'],
    ],
    [['Lily', 'start', 'school']],
  ),
  chat(
    'user',
    'I booked a table at Nobu for Saturday night.',
    [
      ['user', 'person'],
      ['Nobu', 'organization'],
      ['Saturday', 'date'],
    ],
    [['user', 'book', 'table']],
  ),
  chat('user', 'Alex and Priya got engaged in Rome.', [
    ['Alex', 'person'],
    ['Priya', 'person'],
    ['Rome', 'place'],
  ]),
  chat(
    'user',
    'I switched from Android to an iPhone 15.',
    [
      ['user', 'person'],
      ['Android', 'product'],
      ['iPhone 15', 'product'],
    ],
    [['user', 'switch to', 'iPhone 15']],
  ),
  chat('user', 'My doctor is Dr. Hernandez at Mercy Hospital.', [
    ['Dr. Hernandez', 'person'],
    ['Mercy Hospital', 'organization'],
  ]),
  chat(
    'user',
    'I teach yoga at a studio in Brooklyn.',
    [
      ['user', 'person'],
      ['Brooklyn', 'place'],
    ],
    [['user', 'teach', 'yoga']],
  ),
  chat('user', 'Ben is coming to visit from Melbourne next week.', [
    ['Ben', 'person'],
    ['Melbourne', 'place'],
  ]),
  chat(
    'user',
    'I finished reading Dune yesterday.',
    [
      ['user', 'person'],
      ['Dune', 'product'],
    ],
    [['user', 'finish', 'Dune']],
  ),
  chat(
    'user',
    'My wife Hannah works as a nurse at St. Mary’s.',
    [
      ['Hannah', 'person'],
      ['St. Mary’s', 'organization'],
    ],
    [['Hannah', 'work as', 'nurse']],
  ),
  chat(
    'user',
    'I paid $1,200 for the flight to Tokyo.',
    [
      ['user', 'person'],
      ['$1,200', 'money'],
      ['Tokyo', 'place'],
    ],
    [['user', 'pay', '$1,200']],
  ),
  chat('user', 'Our landlord Mr. Green raised the rent again.', [['Mr. Green', 'person']], [['Mr. Green', 'raise', 'rent']]),
  chat(
    'user',
    'I volunteer at the food bank every Sunday.',
    [
      ['user', 'person'],
      ['Sunday', 'date'],
    ],
    [['user', 'volunteer at', 'food bank']],
  ),
  chat('user', 'Chris fixed my bike this morning.', [['Chris', 'person']], [['Chris', 'fix', 'bike']]),
  chat(
    'user',
    'I want to learn Spanish before the trip to Mexico.',
    [
      ['user', 'person'],
      ['Mexico', 'place'],
    ],
    [['user', 'learn', 'Spanish']],
  ),
  chat(
    'user',
    'My son Noah plays soccer for the Riverside Tigers.',
    [
      ['Noah', 'person'],
      ['Riverside Tigers', 'organization'],
    ],
    [['Noah', 'play', 'soccer']],
  ),
  chat(
    'user',
    'I got a promotion at Accenture on Monday.',
    [
      ['user', 'person'],
      ['Accenture', 'organization'],
      ['Monday', 'date'],
    ],
    [['user', 'get', 'promotion']],
  ),
  chat(
    'user',
    'Olivia sent me photos from her trip to Iceland.',
    [
      ['Olivia', 'person'],
      ['Iceland', 'place'],
    ],
    [['Olivia', 'send', 'photos']],
  ),
  chat(
    'user',
    'I cancelled my Netflix subscription.',
    [
      ['user', 'person'],
      ['Netflix', 'organization'],
    ],
    [['user', 'cancel', 'subscription']],
  ),
  chat('user', 'Grandpa Joe turns 90 on June 12.', [
    ['Grandpa Joe', 'person'],
    ['June 12', 'date'],
  ]),
  chat(
    'user',
    'I drive a Honda Civic to work.',
    [
      ['user', 'person'],
      ['Honda Civic', 'product'],
    ],
    [['user', 'drive', 'Honda Civic']],
  ),
  chat('user', 'Maya and I met at a conference in Austin.', [
    ['Maya', 'person'],
    ['Austin', 'place'],
  ]),
  chat('user', 'I bake sourdough bread every weekend.', [['user', 'person']], [['user', 'bake', 'sourdough bread']]),
  chat(
    'user',
    'My friend Daniel opened a coffee shop in Portland.',
    [
      ['Daniel', 'person'],
      ['Portland', 'place'],
    ],
    [['Daniel', 'open', 'coffee shop']],
  ),
  chat('assistant', 'The Eiffel Tower is open until 11 pm in summer.', [['Eiffel Tower', 'place']]),
  chat(
    'user',
    'I signed up for a pottery class at the community center.',
    [['user', 'person']],
    [['user', 'sign up for', 'pottery class']],
  ),
  chat(
    'user',
    'Laura gave me a copy of Sapiens for my birthday.',
    [
      ['Laura', 'person'],
      ['Sapiens', 'product'],
    ],
    [['Laura', 'give', 'copy']],
  ),
  chat(
    'user',
    'I work remotely for a startup based in Berlin.',
    [
      ['user', 'person'],
      ['Berlin', 'place'],
    ],
    [['user', 'work for', 'startup']],
  ),
  chat('user', 'We spent two weeks in Vietnam in January.', [
    ['Vietnam', 'place'],
    ['January', 'date'],
  ]),
  chat(
    'user',
    'My cousin Ravi joined the Navy.',
    [
      ['Ravi', 'person'],
      ['Navy', 'organization'],
    ],
    [['Ravi', 'join', 'Navy']],
  ),
  chat('user', 'I hate waiting at the DMV.', [
    ['user', 'person'],
    ['DMV', 'organization'],
  ]),
  chat('user', 'Sophie painted the mural outside the library.', [['Sophie', 'person']], [['Sophie', 'paint', 'mural']]),

  // Documents
  doc('The contract between Acme Corp and Bluebird Ltd expires on 31 December 2025.', [
    ['Acme Corp', 'organization'],
    ['Bluebird Ltd', 'organization'],
    ['31 December 2025', 'date'],
  ]),
  doc('Invoice 2291 was issued to Northstar Media for $8,500.', [
    ['Northstar Media', 'organization'],
    ['$8,500', 'money'],
  ]),
  doc(
    'Dr. Ruth Klein will present the findings at the Boston conference.',
    [
      ['Ruth Klein', 'person'],
      ['Boston', 'place'],
    ],
    [['Ruth Klein', 'present', 'findings']],
  ),
  doc(
    'The project is led by Arjun Mehta and funded by the Wellcome Trust.',
    [
      ['Arjun Mehta', 'person'],
      ['Wellcome Trust', 'organization'],
    ],
    [
      ['Arjun Mehta', 'lead', 'project'],
      ['Wellcome Trust', 'fund', 'project'],
    ],
  ),
  doc(
    'All employees must complete the security training by April 30.',
    [['April 30', 'date']],
    [['employees', 'complete', 'security training']],
  ),
  doc(
    'Kestrel Analytics provides the data platform for the Denver office.',
    [
      ['Kestrel Analytics', 'organization'],
      ['Denver', 'place'],
    ],
    [['Kestrel Analytics', 'provide', 'data platform']],
  ),
  doc(
    'The board approved a budget of €2.5 million for 2025.',
    [
      ['€2.5 million', 'money'],
      ['2025', 'date'],
    ],
    [['board', 'approve', 'budget']],
  ),
  doc(
    'Jonas Weber reports to the chief financial officer, Ines Moreau.',
    [
      ['Jonas Weber', 'person'],
      ['Ines Moreau', 'person'],
    ],
    [['Jonas Weber', 'report to', 'Ines Moreau']],
  ),
  doc(
    'The new warehouse in Rotterdam handles shipments for Philips.',
    [
      ['Rotterdam', 'place'],
      ['Philips', 'organization'],
    ],
    [['warehouse', 'handle', 'shipments']],
  ),
  doc('Customer support is outsourced to TeleServe in Manila.', [
    ['TeleServe', 'organization'],
    ['Manila', 'place'],
  ]),
  doc(
    'The Atlas 3 server replaces the older Atlas 2 model.',
    [
      ['Atlas 3', 'product'],
      ['Atlas 2', 'product'],
    ],
    [['Atlas 3', 'replace', 'Atlas 2']],
  ),
  doc(
    'Grace Kim approved the purchase order on 14 February 2024.',
    [
      ['Grace Kim', 'person'],
      ['14 February 2024', 'date'],
    ],
    [['Grace Kim', 'approve', 'purchase order']],
  ),
  doc('The Oslo team maintains the billing service.', [['Oslo', 'place']], [['Oslo team', 'maintain', 'billing service']]),
  doc(
    'Meridian Health signed a five-year lease in Phoenix.',
    [
      ['Meridian Health', 'organization'],
      ['Phoenix', 'place'],
    ],
    [['Meridian Health', 'sign', 'lease']],
  ),
  doc('Patrick Doyle is the owner of Doyle Construction.', [
    ['Patrick Doyle', 'person'],
    ['Doyle Construction', 'organization'],
  ]),
  doc(
    'The audit found errors in the 2023 accounts of Fenwick Retail.',
    [
      ['2023', 'date'],
      ['Fenwick Retail', 'organization'],
    ],
    [['audit', 'find', 'errors']],
  ),
  doc(
    'Salesforce hosts the customer records for our Sydney branch.',
    [
      ['Salesforce', 'organization'],
      ['Sydney', 'place'],
    ],
    [['Salesforce', 'host', 'customer records']],
  ),
  doc(
    'Hiroshi Sato designed the packaging for the Aurora lamp.',
    [
      ['Hiroshi Sato', 'person'],
      ['Aurora', 'product'],
    ],
    [['Hiroshi Sato', 'design', 'packaging']],
  ),
  doc('The Cape Town office closes at 5 pm on Fridays.', [
    ['Cape Town', 'place'],
    ['Fridays', 'date'],
  ]),
  doc('Version 4.2 of the Orbit app fixes the login bug.', [['Orbit', 'product']], [['version 4.2', 'fix', 'login bug']]),
  doc('The loan from HSBC must be repaid by June 2027.', [
    ['HSBC', 'organization'],
    ['June 2027', 'date'],
  ]),
  doc(
    'Emily Clarke supervises the lab technicians in Cambridge.',
    [
      ['Emily Clarke', 'person'],
      ['Cambridge', 'place'],
    ],
    [['Emily Clarke', 'supervise', 'lab technicians']],
  ),
  doc(
    'Vendor payments above $10,000 require approval from the finance director.',
    [['$10,000', 'money']],
    [['vendor payments', 'require', 'approval']],
  ),
  doc(
    'Quantum Labs licensed its patent to Intel in 2022.',
    [
      ['Quantum Labs', 'organization'],
      ['Intel', 'organization'],
      ['2022', 'date'],
    ],
    [['Quantum Labs', 'license', 'patent']],
  ),
  doc(
    'The Madrid branch serves clients across Spain and Portugal.',
    [
      ['Madrid', 'place'],
      ['Spain', 'place'],
      ['Portugal', 'place'],
    ],
    [['Madrid branch', 'serve', 'clients']],
  ),
  doc(
    'Tomasz Nowak owns the domain registered for Polaris Studio.',
    [
      ['Tomasz Nowak', 'person'],
      ['Polaris Studio', 'organization'],
    ],
    [['Tomasz Nowak', 'own', 'domain']],
  ),
  doc('The meeting with Unilever was moved to Wednesday, 9 October.', [
    ['Unilever', 'organization'],
    ['Wednesday, 9 October', 'date'],
  ]),
  doc(
    'Oracle supplies the database licences for the Frankfurt data center.',
    [
      ['Oracle', 'organization'],
      ['Frankfurt', 'place'],
    ],
    [['Oracle', 'supply', 'database licences']],
  ),
  doc(
    'Beatriz Silva manages supplier relations for Natura.',
    [
      ['Beatriz Silva', 'person'],
      ['Natura', 'organization'],
    ],
    [['Beatriz Silva', 'manage', 'supplier relations']],
  ),
  doc('The Helix 9 drone weighs 900 grams and costs $499.', [
    ['Helix 9', 'product'],
    ['$499', 'money'],
  ]),
  doc(
    'Sunrise Bakery employs twelve people in Galway.',
    [
      ['Sunrise Bakery', 'organization'],
      ['Galway', 'place'],
    ],
    [['Sunrise Bakery', 'employ', 'people']],
  ),
  doc(
    'Ali Rahman wrote the onboarding guide for new engineers.',
    [['Ali Rahman', 'person']],
    [['Ali Rahman', 'write', 'onboarding guide']],
  ),
  doc(
    'The Stockholm office moved to a new building on Kungsgatan.',
    [
      ['Stockholm', 'place'],
      ['Kungsgatan', 'place'],
    ],
    [['Stockholm office', 'move to', 'building']],
  ),
  doc('Payments are processed by Stripe and settled in euros.', [['Stripe', 'organization']], [['Stripe', 'process', 'payments']]),
  doc(
    'Monica Reyes chairs the ethics committee of Pfizer.',
    [
      ['Monica Reyes', 'person'],
      ['Pfizer', 'organization'],
    ],
    [['Monica Reyes', 'chair', 'ethics committee']],
  ),
  doc('The Zephyr bike ships with a two-year warranty.', [['Zephyr', 'product']], [['Zephyr bike', 'ship with', 'warranty']]),
  doc(
    'Leo Martin joined the legal team in Brussels on 2 May 2024.',
    [
      ['Leo Martin', 'person'],
      ['Brussels', 'place'],
      ['2 May 2024', 'date'],
    ],
    [['Leo Martin', 'join', 'legal team']],
  ),
  doc('The Nairobi clinic treats over 300 patients a week.', [['Nairobi', 'place']], [['Nairobi clinic', 'treat', 'patients']]),
  doc('Our backups are stored with Backblaze in Amsterdam.', [
    ['Backblaze', 'organization'],
    ['Amsterdam', 'place'],
  ]),
  doc(
    'Fatima Zahra leads the translation team for Arabic content.',
    [['Fatima Zahra', 'person']],
    [['Fatima Zahra', 'lead', 'translation team']],
  ),
  doc(
    'The lease for the Chicago warehouse costs $15,000 per month.',
    [
      ['Chicago', 'place'],
      ['$15,000', 'money'],
    ],
    [['lease', 'cost', '$15,000']],
  ),
  doc(
    'Ricardo Gomez audited the accounts of Solara Energy.',
    [
      ['Ricardo Gomez', 'person'],
      ['Solara Energy', 'organization'],
    ],
    [['Ricardo Gomez', 'audit', 'accounts']],
  ),
  doc(
    'The training session in Dubai starts on 3 November.',
    [
      ['Dubai', 'place'],
      ['3 November', 'date'],
    ],
    [['training session', 'start on', '3 November']],
  ),
  doc('Hannah Schmidt translated the manual into German.', [['Hannah Schmidt', 'person']], [['Hannah Schmidt', 'translate', 'manual']]),
  doc('The Vega 5 router supports Wi-Fi 7.', [['Vega 5', 'product']], [['Vega 5 router', 'support', 'Wi-Fi 7']]),
];
